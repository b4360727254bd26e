import Foundation
import NetEmu
import XCTest

/// Issue 4: "a subscriber's downlink capped at 300 kbit/s while the publisher sends three
/// layers (≈150/500/1500 kbit/s): that subscriber gets the low layer within 5 s, recovers the
/// high layer within 15 s after the cap is lifted, and its video never freezes longer than
/// 1 s, while other subscribers keep the high layer".
///
/// alice publishes three layers; bob's page goes through a NetEmu relay whose server→bob
/// direction is capped; carol is direct. bob and carol stop their camera and mute their
/// microphone so that bob's capped downlink carries alice's media only (plus carol's
/// near-empty black frames and silence): alice's low layer (≤150 kbit/s) + her Opus
/// (≈32 kbit/s + ≈20 kbit/s of packet overhead) fit in 300 kbit/s, two publishers' would not.
///
/// Runs **alone** in `scripts/test.sh` (= `.ci/run`), after the parallel suite, with
/// SWITCHBOARD_SIMULCAST_CAP=1: its bounds are wall-clock seconds of a real browser, and a
/// second Chromium test on the same two cores starves both (runs 9–13 below). Without the
/// variable a plain `swift test` skips it. Runs 32–84 (this file's last block) explain the
/// fixes that made it pass. The phantom loss that kept bob and
/// carol off alice's top layer is fixed (docs/rtcp.md, RTX section). The capped-phase
/// mechanism is now in the SFU and checked by pure traces (docs/rtcp.md, "Congestion control
/// and simulcast"): an over-use behind a standing queue cuts to the rate the queue drains at,
/// a loss burst cuts to the received rate at once, a severe shortfall switches at once and
/// stops the old layer (`DownlinkAdaptationTests.testCapStopsTheTopLayerAtOnceAndSwitchesOnTheKeyframe`:
/// layer 0 chosen 0.195 s after a 1.5 Mbit/s → 300 kbit/s cap behind a 0.8 s queue (0.8 s
/// before the growing-queue rule below), its
/// keyframe forwarded 20 ms after the request, a repeated request 500 ms later when the
/// first is missed). End to end on a host at load 7–17 (5 helpers' builds on 2 cores),
/// before the growing-queue rule:
/// - runs with bob really on f at the cap (4, the last code or one change before it):
///   page on the low layer after 2.3 / 7.5 / 2.4 / 1.9 s (the SFU forwards layer 0 within
///   ~1.2 s; the 7.5 s run waited 3 s for the layer-0 keyframe after the urgent switch —
///   hence the repeated request, added after it), high layer 13.9 / 12.1 / 13.9 / 3.9 s
///   after lifting, carol kept f in all, the relay dropped only 20–37 packets (the old layer
///   stops at once, so the queue stops overflowing);
/// - the freeze was 1.85 / 4.77 / 3.54 / 2.99 s then: the estimator reacted only once the
///   30 kB queue was full (it fills in 30 kB × 8 / 1.2 Mbit/s = 0.2 s), ~20 tail drops broke
///   f's reference chain, and the layer-0 keyframe waited behind 0.8 s of queue;
/// - **growing-queue rule** (`QueueOnset`, docs/rtcp.md): the feedback that shows the newest
///   queued packets' delay growing ≥ 50 ms while they arrive at ≤ half their send rate cuts the
///   estimate to 0.85 × their arrival rate and the router switches at once (urgent). The
///   relay's own log (`relayTrace`, printed per 100 ms from the cap) shows it working: with
///   bob on f at 1.0–1.5 Mbit/s and no burst at the cap the queue peaked at 236–592 ms
///   (9–22 kB of 30 kB), f stopped 0.3–0.5 s after the cap, **0 tail drops**. Runs
///   (host load 2–17; runs 1–4 on earlier versions of the rule, 5–7 on the final one):
///   1. (no 2.4 kB minimum, no confirmation) bob on h at the cap after false cuts while
///      uncapped; no drops, queue ≤ 106 ms; after lifting one cut read ≈ 35 kbit/s and held
///      the estimate under 100k for 15 s: f not back within 17 s — FAIL (hence both guards);
///   2. (no 1 s spacing) a 55 kB burst reached the relay within 100 ms of the cap (an f
///      keyframe of bob's up-switch plus a hold upstream of the relay: 3.4× the audio rate in
///      the same 100 ms): 36 tail drops before any feedback could exist; low layer after
///      1.4 s, f back 4.0 s after lifting, freezes 4 totalling 6.48 s, longest 2.82 s — FAIL;
///   3. (no 1 s spacing) 0 drops; low layer after 3.4 s (polls 1–2 s apart at load), f back
///      8.8 s after lifting, freezes 4 totalling 1.22 s, longest 0.41 s — PASS;
///   4. (no 1 s spacing) 0 drops, but five cuts within 1 s while the queue drained, the last
///      reading 160k of the 300k link: estimate 154k, the video paused; low layer after
///      2.1 s, f back 14.7 s after lifting, freezes 8 totalling 7.45 s, longest 4.70 s — FAIL
///      (hence at most one cut per second);
///   5. (final rule) bob already back on h at the cap (the slow over-use path cut him from f
///      to 500k 2.7 s before it); cuts read 406k / 317k / 308k of the 300k link, 0 drops
///      (a hold-and-flush upstream of the relay at +0.9 s put 465 ms in the queue, still no
///      drop); one freeze of 0.26 s in the cap's first 3.4 s; after lifting the estimate
///      reached 3.4 Mbit/s only at +7 s and f was not back within 17 s (upgrade hold and
///      cool-down behind slow probes at load — the ramp-up problem below) — FAIL;
///   6. (final rule) bob on f at 1.5 Mbit/s: one cut read 297k, the SFU on layer 0 within
///      0.7 s, bob at 180p by 1.2 s (freezes unchanged so far); the queue peaked at 592 ms, no
///      drop — then a bandwidth probe 1.2 s after the switch (`probeAfterSwitch`) poured
///      ≈ 24 kB of RTX padding into the still half-full queue: 31 tail drops, bob's decoder
///      stopped (147 frames from +2.3 s on) and f was not back within 17 s — FAIL (hence:
///      no probe into a standing queue, `Router.startProbe`; the router simulation shows the
///      same probe and 9 drops without that guard);
///   7. (final rule + probe guard) bob on f (1–2 Mbit/s, a keyframe just before the cap): one
///      cut read 302k; two hold-and-flush bursts (15 kB and 23 kB within 100 ms each, 2.6× the
///      audio rate) took the queue to 775 ms and 6 drops; low layer after 2.4 s, getStats
///      freezes 2 totalling 0.82 s, longest 0.54 s (the issue's freeze bound held), f back
///      8.1 s after lifting — but framesDecoded stalled 6.43 s: 7 s into the cap the slow
///      over-use path (0.85 × the recent rate) put the estimate at 180k, below layer 0 +
///      audio, and the video was paused (webrtc-stats counts a > 5 s gap as a pause, not a
///      freeze) — FAIL.
///   Summary: the growing-queue rule does what the hypothesis said — the cut reads the cap
///   (266–302k) on the first feedbacks, f stops while the queue fills, and where nothing else
///   interferes there is no tail drop and the freezes stay under 1 s (runs 3, 6 until its
///   probe, 7's freeze figures). 1 of 7 runs passed: the rest failed on a burst reaching the
///   relay before any feedback (2), repeated cuts / a probe / the slow path pushing the
///   estimate below layer 0 + audio under the cap (4, 6, 7), or the slow ramp back to f (1, 5).
/// - **estimator changes of the `capest` branch** (docs/rtcp.md, "Congestion control and
///   simulcast"; pure traces in BandwidthEstimatorTests, DownlinkAdaptationTests,
///   LayerSelectorTests, ProbeClustersTests, QueueOnsetTests): an over-use holds while the
///   newest packets' delay is not rising and cuts from the queue's drain rate (class 1);
///   probe clusters judged whole, closed by the router, ≥ 80 % acknowledged; exponential
///   probing (≤ 2 × the estimate, the next step 0.7 s after a success) topping up the media
///   rate only; probes while video is paused; an urgent downgrade caused by a growing-queue
///   cut that is undone is undone too (class 2); this test checks bob is on f right before
///   the cap (class 4). Runs 8–22, all on this branch, **host at load 6–29** (five helpers'
///   builds and Chromium tests on 2 cores; `uptime` before/after each run):
///   8. (load 10; before the false-alarm undo) bob on f at +30 s, then a growing-queue cut
///      reading 464k, undone 1.3 s later, had switched him f → q; probes read 146–1,393k on
///      the idle path at that load and he was not back on f within the 40 s pre-cap check
///      (5 more onsets, 3 undone) — capped on h, f not back within 17 s after lifting — FAIL
///      (hence the undo of urgent switches after a false alarm);
///   9. (load 10–12) uncapped: a cut to 246k at +6 s and an onset reading 115k at +7.6 s
///      that a standing queue confirmed (the relay's per-100 ms log shows the SFU's output
///      stalling 100–400 ms at a time): video paused 8 s, no probe while paused (hence the
///      paused probe). f at +33 s; at the cap alice's Chromium stalled 400 ms and flushed
///      1.7 Mbit/s into one 100 ms slot: queue 778 ms, 64 drops; bob at 135p by +3.9 s; f not
///      back within 17 s after lifting (estimate 190–370k, probes reading 199–347k) — FAIL;
///   10. (load 19–21) uncapped: bob's transport-cc read 50–90 kbit/s delivered for 30 s
///      (the SFU sent 55–360k), the estimate followed to 76k and the video was paused
///      20–52 s with no probe — f never reached in 40 s — FAIL (uncapped stage);
///   11. (load 17–29, paused probe) uncapped: delivered 54–115k, 10 growing-queue cuts
///      (2 undone), f never reached in 40 s — FAIL (uncapped stage);
///   12. (load 15–20, clusters closed by the router) bob on f at the cap (estimate 1.3M):
///      the SFU on layer 0 within 0.45 s, bob at 135p by 1.9 s, the relay's queue peaked at
///      254 ms, **0 drops**; 9 s into the cap bob's receiver acknowledged only 122–134k
///      (the SFU sent 71–189k: alice's own stalls) and an over-use with the delay rising
///      cut to 148k: video paused 16 s (the paused probes read 121–329k); after lifting the
///      estimate reached 367k in 14 s — f not back within 17 s — FAIL.
///   13. (load 17–29) uncapped: alice's Chromium sent so little that the SFU forwarded
///      60–110k to bob and bob acknowledged 40–66k for a minute; carol (direct, no relay)
///      did not get f within 30 s either — FAIL (uncapped stage, the host).
///   14. (load 11–19, probe success needing a 10 % rise) bob on f at the cap: the SFU
///      stopped f at +0.56 s, bob at 135p by +1.87 s (one freeze of 0.45 s), the relay's
///      queue peaked at 338 ms, **0 drops**, the low layer held; but growing-queue cuts
///      under the cap read 154k (bob acknowledging 57–140k while the SFU sent 53–107k) and
///      after lifting the probes read 275k, 191k, 546k, 387k: h at +5.7 s, the estimate at
///      644k by +17.6 s — f not back within 17 s — FAIL. (A probe whose *send* rate the
///      loaded SFU could not reach reads low — min(send, receive) — and counts as failed:
///      5 s to the next; an inconclusive-probe rule is left to do.)
///   15. (load 12–20, final code) bob on f at the cap (estimate 1.33M): the SFU on layer 0
///      by +0.85 s, bob at 135p by +2.2 s, no new freeze in the cap's first 3 s, the relay's
///      queue peaked at 282 ms, **0 drops**; growing-queue cuts under the cap read 253–261k
///      (the estimate stayed 221–245k, layer 0 held); after lifting, growing-queue cuts read
///      348k and then 108k (confirmed by a standing queue: bob acknowledging 83–114k on the
///      uncapped path) — the estimate was 104–261k for the rest of the window, f not back
///      within 17 s — FAIL.
///   16. (load 6–16, final code) **low layer after 2.5 s, f back 8.0 s after lifting**
///      (the probes after the lift read 447k, 489k, 1,141k: h at +4.5 s, f at +7.6 s),
///      carol kept f, the relay dropped 1 packet — but the freeze bound failed: longest
///      stall 1.44 s, getStats freezes 4 totalling 3.32 s, the longest ≥ 2.28 s. The relay's
///      log: the SFU's output stopped for 300 ms at +0.3 s and alice's Chromium flushed
///      2.4 Mbit/s into one 100 ms slot at +0.8 s (queue 781 ms, the one drop); the first
///      cut took bob f → h (at +1.55 s), the next h → q (+2.46 s) — FAIL (freeze only).
///   17. (load 12–18, final code) **low layer after 2.6 s, f back 12.1 s after lifting**,
///      carol kept f — freezes 4 totalling 2.18 s, the longest 1.20 s: over the bound. At the
///      cap nothing reached the relay for 300 ms and then 1.3, 1.6 and 2.25 Mbit/s arrived in
///      single 100 ms slots (+0.6, +0.8, +1.1 s; the SFU forwarding alice's stalled-and-
///      flushed frames back to back): queue 799 ms, 41 drops before the cut could act —
///      FAIL (freeze only). A send-side pacer (another helper's work) would spread such
///      flushes; the estimator cannot.
///   18. (load 15–21) low layer after 2.0 s, f back 3.8 s after lifting, 0 drops (queue
///      ≤ 317 ms), carol kept f — freezes 3 totalling 1.83 s, the longest 1.07 s — FAIL
///      (freeze, by 70 ms);
///   19. (load 21) **PASS**: low layer after 0.7 s (the SFU stopped f at +0.44 s), f back
///      10.3 s after lifting, freezes 2 totalling 1.11 s (longest 0.86 s), 0 drops (queue
///      ≤ 184 ms), carol kept f;
///   20. (load 20–23) **PASS**: low layer after 2.5 s, f back 8.8 s after lifting, one
///      freeze of 0.27 s, 18 drops (a flush at the cap, queue 799 ms), carol kept f;
///   21. (load 23–24) the first cut took bob f → h (+0.41 s), q only at 5.58 s (over the 5 s
///      bound); after lifting the probes read 171k and 303k (failed: 5 s apart) and the
///      estimate stayed ≈ 410–420k — f not back within 17 s — FAIL;
///   22. (load 22–24) low layer by 3.5 s, 0 drops; after lifting the probes read 123k and
///      the estimate stayed 356–416k — f not back within 17 s — FAIL.
///   Runs 23–25 (load 8–10) with the paused-recovery change (probes taken under an over-use
///   without a standing queue, probe-confirmed growth, paused probes every 1.5 s;
///   `PausedRecoveryTests`), after a run on main where a cut read 185k, paused the video and
///   the estimate crawled 190k → 220k in 10 s with the video never back:
///   23. **PASS**: low layer after 2.8 s, f back 5.1 s after lifting, freezes 2 totalling
///      1.04 s, 0 drops; cuts read 269–273k (one undone), the video never paused;
///   24. low layer after 1.4 s (cut read 296k), f back 7.7 s after lifting, 0 drops, carol kept
///      f — one getStats freeze of 2.64 s at the switch (longest framesDecoded stall 0.87 s)
///      — FAIL (freeze only);
///   25. **PASS**: low layer after 0.8 s (cuts read 278–280k), f back 14.0 s after lifting,
///      freezes 3 totalling 0.94 s, 0 drops, carol kept f.
///   No run cut below layer 0 + audio, so the new recovery path was not exercised end to end.
///   Runs 26–31 on main after every merge (pacer + estimator + paused recovery), the test
///   alone on the host (load 9–11, the test's own Chromium and server):
///   26. **PASS**: low layer 1.0 s, f back 7.7 s, one freeze 0.68 s, 0 drops;
///   27. **PASS**: low layer 0.7 s, f back 3.6 s, one freeze 0.55 s, 0 drops;
///   28. low layer 1.8 s, f back 8.0 s, 0 drops, longest framesDecoded stall 0.80 s, but
///      getStats freezes 2 totalling 3.59 s (longest 3.16 s) — FAIL (freeze only);
///   29. low layer 1.0 s, f back 7.7 s, 0 drops, stall 0.99 s, one getStats freeze 1.51 s —
///      FAIL (freeze only);
///   30. **PASS**: low layer 0.9 s, f back 8.2 s, no freeze, 0 drops;
///   31. **PASS**: low layer 1.8 s, f back 12.3 s, freezes 3 totalling 1.88 s (longest
///      0.87 s), 9 drops.
///   4 of 6: every run met the 5 s and 15 s bounds with carol on f; the two failures are
///   getStats freezes longer than the longest framesDecoded stall (3.16 s against 0.80 s),
///   i.e. frames decoded but rendered late or not at all around the switch — diagnosed in
///   runs 32–84 below.
/// - **Runs 32–84 (2026-11-30 05:00–06:52)**, with an in-page 50 ms getStats log of bob's
///   video and a relay packet dump (BrowserSimulcastCapTests+FrameLog.swift). Headless
///   Chromium presents no frames (`getVideoPlaybackQuality` counts every one dropped), so a
///   getStats freeze is a gap between frames leaving libwebrtc's decoder. Found and fixed:
///   1. **3.0–3.7 s freezes with every packet delivered** (runs with framesReceived stuck
///      while packets arrived, no NACK, then Chromium's PLI 3 s later): the SFU did not
///      rewrite VP8 PictureID/TL0PICIDX, and after a switch to a layer numbered behind the
///      old one libwebrtc's reference finder stashed every frame as waiting for the old
///      layer's missing ids. Fixed: `VP8PictureRewriter` (docs/rtcp.md, E2EE note).
///   2. **3.0 s freeze at the cap**: the SFU resent ≈ 20 kB of the old top layer into the
///      capped link after the downswitch; that tail-dropped the new layer's packets, which
///      were NACKed one 0.7 s queue delay later, past the store's 1 s age bound, and nothing
///      asked for a keyframe until Chromium's 3 s timeout. Fixed: NACKs for a layer the
///      subscriber left are not resent; an unrepairable NACK asks for a keyframe.
///   3. **Repeated pauses under the cap** (0.6–2.5 s, and once 9.6 s): a growing-queue cut
///      read 150–190k on the 300k link while bob acknowledged 263k, below layer 0 + audio.
///      Fixed: no pause while the acknowledged rate carries the lowest layer and the audio.
///   Also: forwarded SRs keep the publisher's clock relation between its streams, and layer
///   switches follow capture time (`SenderClock`); the `layer_reason` metric names why
///   carol left f. A sustained-rate variant of the layer rates (busiest 100 ms left out)
///   was tried and reverted: it made bob climb to h under the cap (run 64).
///   Runs at load 16–33 (other helpers' builds and benchmarks) failed on host starvation:
///   the SFU's output stalling 600 ms including audio, alice's Chromium sending 60–110k.
///   After those fixes, the test alone on the host (load 7–12): runs 69–73 and 74–78,
///   10 of 10 pass. The first clean-clone `.ci/run` with it (run 79) failed: a keyframe
///   request's 180p keyframe lifted the low layer's 1 s rate past the estimate at the end
///   of the cap and the video paused 3.9 s. Fixed: the pause decision reads the lowest
///   layer's rate without its keyframe bursts (`BitrateMeter.sustainedBitrate`). Runs 80–84
///   (load 5–11): **5 of 5 pass** — low layer after 0.9–1.5 s, f back 7.0–8.3 s after
///   lifting, longest getStats freeze 0.22 s, carol on f. Over runs 69–84 the recovery
///   bound had the thinnest margin (14.5 s once): probes that read low delay the climb.
///   Summary: 2 of 15 on this branch at load 6–29 (runs 19, 20), against 1 of 7 at load
///   2–17 before; of the last 7 runs (16–22, final code) 2 passed, 3 met the 5 s and 15 s
///   bounds and failed only the 1 s freeze (2.28 s, 1.20 s, 1.07 s: flushes and stalls
///   upstream of the relay), 2 failed the recovery on probes reading low at load 22–24 —
///   a probe the loaded SFU could not *send* at its rate reads low (min(send, receive)) and
///   counts as failed (5 s to the next); an inconclusive-probe rule is the next step. Not
///   ≥ 4 of 5: still gated. Runs 9–13 and 15 failed on the receiving side starving
///   (transport-cc reading 50–130 kbit/s delivered on an uncapped or 300k path, the SFU's
///   and the publisher's output stalling for 100–400 ms), which the estimator reads,
///   correctly for what it sees, as a slow link. To re-measure on a quiet host (load < 4).
/// - a selector bug this test used to hide: a subscription made before alice's layers
///   arrived had no selector decision and stayed on the router's default (the top layer)
///   whatever the estimate — the "uncapped" phase passed only because of it (fixed: the
///   first decision waits for a layer, `LayerSelectorTests.testFirstDecisionWaitsForArrivingLayers`);
/// - with the estimate in charge, the uncapped ramp-up to f did not finish within 40 s in 4
///   of 13 runs (probes read 35–600 kbit/s on an idle path, false over-uses, alice's own
///   Chromium lowering its layers under CPU load).
/// The uncapped wait checks the SFU's layer, bob's decoded height and f's rate at the SFU
/// together (below).
final class BrowserSimulcastCapTests: BrowserSimulcastCase {
    /// 300 kbit/s: the issue's cap. RateCap defaults: 1500-byte burst, 30 kB queue (0.8 s).
    static let capBitsPerSecond = 300_000.0
    /// 5 s / 15 s / 1 s: the issue's bounds.
    static let downswitchWithin = 5.0
    static let recoveryWithin = 15.0
    static let longestFreeze = 1.0
    /// 12 s under the cap: the low layer must also hold (no oscillation back up while capped).
    static let capHeld = 12.0
    /// When alice's top layer counts as past its start-up ramp, at the SFU: at ≥ 1 Mbit/s
    /// (f's `maxBitrate` is 1.5 Mbit/s), or at ≥ 600 kbit/s (twice the cap, so the cap still
    /// forces bob down to the low layer) once bob has had f for 10 s. Alice's Chromium
    /// gives f what its own send estimate leaves after q and h: in a clean-clone `.ci/run`
    /// on a quiet host (2026-11-30 22:24) f ran steadily at ~750–850 kbit/s from +6 s for
    /// 38 s, bob on f throughout, so a 1 Mbit/s floor alone failed the uncapped stage,
    /// while the cap stage that followed passed (low layer after 0.8 s, f back 7.5 s after
    /// lifting, no freeze).
    static let topLayerBeforeCap = TopLayerRate(ramped: 1_000_000, settled: 2 * capBitsPerSecond, settledAfter: 10)
    /// 1 s: the window over which f's rate is measured for ``topLayerBeforeCap``. Between
    /// two polls (200 ms) one start-up key frame passed the 1 Mbit/s floor: in a `.ci/run`
    /// (2026-11-30 23:52) the uncapped stage ended 2.6 s after the join, with f at 231
    /// packets at the SFU, and carol, past a check that saw her on f at one poll, was on h
    /// at the cap and failed the cap stage's check.
    static let rateWindow = 1.0
    /// 1 s: carol counts as on f once she has stayed there this long, not on one poll.
    static let carolOnTopFor = 1.0
    /// 200 ms polls: fine enough to see a 1 s stall of framesDecoded.
    static let poll = 0.2

    func testDownlinkCapSwitchesThatSubscriberToTheLowLayerAndBackWithoutLongFreezes() throws {
        guard ProcessInfo.processInfo.environment["SWITCHBOARD_SIMULCAST_CAP"] == "1" else {
            throw XCTSkip("timing-sensitive: runs alone in scripts/test.sh; set SWITCHBOARD_SIMULCAST_CAP=1 to run it here")
        }
        let server = try ServerProcess(settings: ["auth.dev_tokens": "true"])
        let relay = try relay(to: server)
        defer { relay.stop() }
        let chromium = try Chromium(loop: loop)
        defer { chromium.close() }
        let (aliceKey, bobKey, carolKey) = ("alice/laptop", "bob/phone", "carol/desk")
        // adaptive=0: the pages' small test tiles would otherwise cap each subscriber's layer
        // by rendered size (sfu.preferences); this test is about the bandwidth-driven choice.
        let alice = try openClient(chromium, server, account: "alice", device: "laptop", query: "?adaptive=0")
        let bob = try openClient(chromium, server, account: "bob", device: "phone", query: "?sfuCandidatePort=\(relay.port)&adaptive=0")
        let carol = try openClient(chromium, server, account: "carol", device: "desk", query: "?adaptive=0")
        try joinAll([alice, bob, carol], room: "capped", keys: [aliceKey, bobKey, carolKey])
        let start = Date()
        (traceRelay, tracePage) = (relay, bob)
        defer { print("cap trace (bob's downlink, s since join):\n" + trace.joined(separator: "\n")) }
        for page in [bob, carol] {
            try page.evaluate("document.getElementById('mute-video').click(); document.getElementById('mute-audio').click();")
        }

        // Uncapped: alice sends all three layers and both subscribers get the high one (f).
        // 60 s: Chromium enables f once its send estimate passes ≈1.3 Mbit/s.
        try alice.waitUntil("""
            window.switchboard.stats().then(s => ['q','h','f'].every(rid =>
              s.outboundVideo.some(o => o.pc === 'room' && o.rid === rid && o.framesEncoded > 0 && o.frameHeight > 0)))
            """, timeout: 60)
        // Which resolution is which layer: below h's height is q, above it is f (robust to
        // Chromium scaling the capture down a step under CPU load).
        let sent = try outbound(alice)
        let midHeight = try XCTUnwrap(sent["h"]?.height)
        XCTAssertLessThan(try XCTUnwrap(sent["q"]?.height), midHeight)
        XCTAssertGreaterThan(try XCTUnwrap(sent["f"]?.height), midHeight)
        let lowHeight = midHeight - 1, highHeight = midHeight + 1   // bob's frameHeight ≤ lowHeight: q; ≥ highHeight: f
        // Uncapped means the SFU forwards f to bob *and* bob decodes f-sized frames, checked
        // together: in the first seconds Chromium sends f at a fraction of its rate, so the
        // selector may pick f on the 300 kbit/s start estimate and leave it as f's rate
        // grows; a wait on the SFU's layer alone ended on that transient, and the page then
        // waited for f-sized frames on a subscriber the estimate had moved down.
        // And f must be past its start-up ramp before the cap (``topLayerBeforeCap``): capped
        // while f still ramped (≈ 300–500 kbit/s), the cap tested little and the run ended
        // in the start-up transient.
        try waitForLayer(alice, publisher: aliceKey, subscriber: bobKey, layer: 2, within: 40, "bob, uncapped", since: start,
                         page: bob, stream: aliceKey, minHeight: highHeight, topLayerRate: Self.topLayerBeforeCap)
        try waitForLayer(alice, publisher: aliceKey, subscriber: carolKey, layer: 2, within: 30, "carol, uncapped", since: start,
                         sustained: Self.carolOnTopFor)
        // Bob again, right before the cap: carol's wait can take seconds, and bob may have
        // left f meanwhile (run 5 capped him on h). Same bound and checks as the first wait.
        try waitForLayer(alice, publisher: aliceKey, subscriber: bobKey, layer: 2, within: 40, "bob, right before the cap", since: start,
                         page: bob, stream: aliceKey, minHeight: highHeight, topLayerRate: Self.topLayerBeforeCap)
        // And carol, for the same reason: the cap stage checks that she stays on f.
        try waitForLayer(alice, publisher: aliceKey, subscriber: carolKey, layer: 2, within: 30, "carol, right before the cap", since: start)

        // Cap server → bob.
        try startFrameLog(bob, stream: aliceKey)
        var fArriving = LayerProgress(rid: "f")
        var watch = FreezeWatch(start: try XCTUnwrap(try inbound(bob)[aliceKey]), now: Date())
        try relay.setImpairment(direction: .downlink, Impairment(rate: RateCap(bitsPerSecond: Self.capBitsPerSecond)))
        let capped = Date()
        let capOrigin = pageClock(bob)
        defer { print(frameLogReport(bob, origin: capOrigin)) }
        let cappedNs = ImpairmentRelay.monotonicNowNs() - relay.createdAtNs
        defer { print(relayTrace(relay, from: cappedNs, seconds: 3) + "\n" + pollTrace.joined(separator: "\n") + "\n" + carolTrace.joined(separator: "\n")) }
        traceDownlink(try metrics(alice), since: start, "capped")
        var downAt: Double?
        var carolLeftHigh: [String] = []
        while Date().timeIntervalSince(capped) < Self.capHeld {
            Thread.sleep(forTimeInterval: Self.poll)
            let samples = try metrics(alice)
            traceDownlink(samples, since: start)
            let bobVideo = try XCTUnwrap(try inbound(bob)[aliceKey])
            watch.observe(bobVideo, now: Date())
            let bobLayer = sfuSubscriberLayer(samples, publisher: aliceKey, subscriber: bobKey)
            if Date().timeIntervalSince(capped) < 4 {
                pollTrace.append(String(format: "+%.2f s: SFU layer %@, bob decoded %.0f frames at %dp, freezes %.0f totalling %.2f s",
                                        Date().timeIntervalSince(capped), bobLayer.map { "\($0.current)→\($0.target)" } ?? "-",
                                        bobVideo.framesDecoded, bobVideo.height, bobVideo.freezeCount, bobVideo.totalFreezesDuration))
            }
            let fGrew = fArriving.update(samples, self, publisher: aliceKey)
            noteCarol(samples, since: capped, publisher: aliceKey, subscriber: carolKey)
            if let carolLayer = sfuSubscriberLayer(samples, publisher: aliceKey, subscriber: carolKey), carolLayer.current != 2, fGrew {
                carolLeftHigh.append(String(format: "%.1f s: layer %d (%@)", Date().timeIntervalSince(capped), carolLayer.current,
                                            layerReason(samples, publisher: aliceKey, subscriber: carolKey)))
            }
            if downAt == nil, bobLayer?.current == 0, bobVideo.height <= lowHeight {
                downAt = Date().timeIntervalSince(capped)
            } else if downAt != nil, (bobLayer?.current ?? 0) > 0 {
                XCTFail(String(format: "%.1f s into the cap bob left the low layer: %@", Date().timeIntervalSince(capped), String(describing: bobLayer)))
            }
        }
        let down = try XCTUnwrap(downAt, "bob never got the low layer (below \(midHeight)p) under the cap")
        XCTAssertLessThanOrEqual(down, Self.downswitchWithin, "bob's switch to the low layer")
        let cappedCounters = relay.counters.downlink

        // Lift the cap: bob recovers the high layer.
        try relay.setImpairment(direction: .downlink, .none)
        let lifted = Date()
        let liftedNs = ImpairmentRelay.monotonicNowNs() - relay.createdAtNs
        defer { print(relayPackets(relay, from: liftedNs - 300_000_000, seconds: 6)) }
        traceDownlink(try metrics(alice), since: start, "lifted")
        var upAt: Double?
        while Date().timeIntervalSince(lifted) < Self.recoveryWithin + 2 {
            Thread.sleep(forTimeInterval: Self.poll)
            let samples = try metrics(alice)
            traceDownlink(samples, since: start)
            let bobVideo = try XCTUnwrap(try inbound(bob)[aliceKey])
            watch.observe(bobVideo, now: Date())
            let fGrew = fArriving.update(samples, self, publisher: aliceKey)
            noteCarol(samples, since: capped, publisher: aliceKey, subscriber: carolKey)
            if let carolLayer = sfuSubscriberLayer(samples, publisher: aliceKey, subscriber: carolKey), carolLayer.current != 2, fGrew {
                carolLeftHigh.append(String(format: "+%.1f s after lifting: layer %d (%@)", Date().timeIntervalSince(lifted), carolLayer.current,
                                            layerReason(samples, publisher: aliceKey, subscriber: carolKey)))
            }
            if sfuSubscriberLayer(samples, publisher: aliceKey, subscriber: bobKey)?.current == 2, bobVideo.height >= highHeight {
                upAt = Date().timeIntervalSince(lifted)
                break
            }
        }
        let up = try XCTUnwrap(upAt, "bob did not get the high layer (above \(midHeight)p) back within \(Self.recoveryWithin + 2) s")
        XCTAssertLessThanOrEqual(up, Self.recoveryWithin, "bob's recovery of the high layer")
        XCTAssertEqual(carolLeftHigh, [], "carol (uncapped) keeps alice's high layer")
        XCTAssertLessThanOrEqual(watch.longestStall, Self.longestFreeze + Self.poll, "longest stall of bob's framesDecoded")
        XCTAssertLessThanOrEqual(watch.longestFreeze, Self.longestFreeze, "longest freeze by getStats (totalFreezesDuration per freezeCount)")
        print(String(format: "cap: bob low layer after %.1f s, high layer %.1f s after lifting; longest stall %.2f s, "
            + "freezes %d totalling %.2f s (longest ≥ %.2f s); relay dropped %d (queue full) while capped; carol left f: %d times",
            down, up, watch.longestStall, Int(watch.freezes), watch.freezeSeconds, watch.longestFreeze,
            cappedCounters.droppedQueueFull, carolLeftHigh.count))
    }

    /// Bob's downlink state once a second, printed at the end (why a switch came or did not).
    var trace: [String] = []
    /// Every change of carol's (current, target, reason) for alice's video, with the time
    /// since the cap: why an uncapped subscriber left the top layer.
    var carolTrace: [String] = []
    private var carolLast = ""

    func noteCarol(_ samples: [Sample], since capped: Date, publisher: String, subscriber: String) {
        let layer = sfuSubscriberLayer(samples, publisher: publisher, subscriber: subscriber)
        let state = "\(layer.map { "\($0.current)→\($0.target)" } ?? "-") (\(layerReason(samples, publisher: publisher, subscriber: subscriber)))"
        guard state != carolLast else { return }
        carolLast = state
        let arriving = sfuVideoLayers(samples, publisher: publisher).sorted { $0.key < $1.key }.map { "\($0.key):\(Int($0.value.packets))" }.joined(separator: " ")
        carolTrace.append(String(format: "%+.2f s: carol %@, alice's layers at the SFU (packets) %@", Date().timeIntervalSince(capped), state, arriving))
    }
    /// Every poll of the first 4 s of the cap: the SFU's layer for bob and bob's decoding.
    var pollTrace: [String] = []

    /// What the relay did to bob's downlink per 100 ms from `from` (ns since the relay's
    /// creation) for `seconds`: datagrams and kbit/s in, per payload type, longest queue
    /// delay, tail drops — the bottleneck's own view of the cap's first seconds.
    func relayTrace(_ relay: ImpairmentRelay, from: UInt64, seconds: Int) -> String {
        let bucket: UInt64 = 100_000_000
        var lines = ["relay, bob's downlink per 100 ms from the cap (in: packets kbit/s [pt:kbit/s]; queue delay max ms; drops):"]
        let entries = relay.log.filter { $0.direction == .downlink && $0.arrivalNs + 300_000_000 >= from }
        for index in -3..<(seconds * 10) {
            let start = UInt64(Int64(from) + Int64(index) * Int64(bucket))
            let slice = entries.filter { $0.arrivalNs >= start && $0.arrivalNs < start + bucket }
            var byType: [UInt8: Int] = [:]
            var maxDelay = 0.0
            var drops = 0
            for entry in slice {
                byType[entry.rtp?.payloadType ?? 0, default: 0] += entry.size
                switch entry.action {
                case .delayed(let ms), .reordered(let ms): maxDelay = max(maxDelay, ms)
                case .dropped: drops += 1
                case .forwarded: break
                }
            }
            let total = slice.reduce(0) { $0 + $1.size }
            let types = byType.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value * 8 / 100)" }.joined(separator: " ")
            lines.append(String(format: "%+5.1f s: in %3d %5dk [%@] delay %4.0f ms drops %d", Double(index) / 10, slice.count, total * 8 / 100, types, maxDelay, drops))
        }
        return lines.joined(separator: "\n")
    }
    private var lastTrace = Date.distantPast
    /// The relay's server→bob counters and bob's page, for the trace.
    var traceRelay: ImpairmentRelay?
    var tracePage: ChromiumPage?

    func traceDownlink(_ samples: [Sample], since start: Date, _ note: String = "") {
        guard Date().timeIntervalSince(lastTrace) >= 1 || !note.isEmpty else { return }
        lastTrace = Date()
        var extra = ""
        if let down = traceRelay?.counters.downlink {
            extra += " | relay→bob in \(down.received) out \(down.sent) dropped \(down.droppedQueueFull + down.droppedRelayBacklog)"
        }
        if let page = tracePage, let list = (try? stats(page))?.raw["inboundVideo"] as? [[String: Any]] {
            extra += " | bob lost " + list.filter { $0["pc"] as? String == "room" }
                .map { "\($0["stream"] as? String ?? "?"): \(($0["packetsLost"] as? NSNumber)?.intValue ?? -1)/\(($0["bytesReceived"] as? NSNumber)?.intValue ?? -1)B" }
                .joined(separator: ", ")
        }
        // Bytes at bob's transport (after the socket, before SRTP and demux) against the sum
        // of what its inbound-rtp streams count: the gap is dropped inside the page.
        if let page = tracePage, let transport = try? page.evaluate("""
            window.switchboard._roomPC.getStats().then(r => { let t = 0, p = 0, rtp = 0;
              r.forEach(s => { if (s.type === 'transport') { t += s.bytesReceived || 0; p += s.packetsReceived || 0; }
                               if (s.type === 'inbound-rtp') rtp += (s.bytesReceived || 0) + (s.headerBytesReceived || 0); });
              return t + ' B / ' + p + ' packets at the transport, ' + rtp + ' B in inbound-rtp'; })
            """) as? String {
            extra += " | bob " + transport
        }
        trace.append(String(format: "%5.1f ", Date().timeIntervalSince(start)) + downlinkTrace(samples, member: "bob/phone", publisher: "alice/laptop")
            + extra + (note.isEmpty ? "" : "  ← " + note))
    }

    /// A floor on the publisher's top-layer rate at the SFU: `ramped` at once, or `settled`
    /// once the subscriber has had the layer for `settledAfter` seconds.
    struct TopLayerRate {
        let ramped: Double
        let settled: Double
        let settledAfter: Double

        func isMet(bitsPerSecond: Double, onLayerFor seconds: Double) -> Bool {
            bitsPerSecond >= ramped || (bitsPerSecond >= settled && seconds >= settledAfter)
        }
    }

    /// Waits until the SFU forwards `layer` of `publisher`'s video to `subscriber` (for at
    /// least `sustained` seconds of polls). With `subscriberPage`: also until that page
    /// decodes `stream` at ≥ `minHeight`. With `topLayerRate`: also until the publisher's
    /// `layer` runs at that rate at the SFU, measured over ``rateWindow``.
    func waitForLayer(_ page: ChromiumPage, publisher: String, subscriber: String, layer: Int, within: Double, _ what: String,
                      since start: Date, page subscriberPage: ChromiumPage? = nil, stream: String = "", minHeight: Int = 0,
                      topLayerRate: TopLayerRate? = nil, sustained: Double = 0) throws {
        let deadline = Date(timeIntervalSinceNow: within)
        var last: (current: Int, target: Int)?
        var topBytes: [(bytes: Double, at: Date)] = []
        var onLayerSince: Date?
        var topBps = 0.0
        while Date() < deadline {
            let samples = try metrics(page)
            traceDownlink(samples, since: start)
            last = sfuSubscriberLayer(samples, publisher: publisher, subscriber: subscriber)
            if last?.current == layer { onLayerSince = onLayerSince ?? Date() } else { onLayerSince = nil }
            let onLayerFor = onLayerSince.map { Date().timeIntervalSince($0) } ?? 0
            // The publisher's top layer's rate at the SFU since the last poll at least
            // ``rateWindow`` ago (0 until there is one).
            let now = Date()
            let bytes = sfuVideoLayers(samples, publisher: publisher).values.first { $0.layer == layer }?.bytes ?? 0
            if let base = topBytes.last(where: { now.timeIntervalSince($0.at) >= Self.rateWindow }) {
                topBps = (bytes - base.bytes) * 8 / now.timeIntervalSince(base.at)
                topBytes.removeAll { $0.at < base.at }
            } else {
                topBps = 0
            }
            topBytes.append((bytes, now))
            let rateMet = topLayerRate.map { $0.isMet(bitsPerSecond: topBps, onLayerFor: onLayerFor) } ?? true
            if last?.current == layer, onLayerFor >= sustained, rateMet,
               try subscriberPage.map({ (try inbound($0)[stream]?.height ?? 0) >= minHeight }) ?? true { return }
            Thread.sleep(forTimeInterval: Self.poll)
        }
        XCTFail("\(what): layer \(layer) not forwarded within \(within) s (last \(String(describing: last)), top layer at the SFU \(Int(topBps / 1000)) kbit/s)")
    }

    /// Whether a publisher's layer grew at the SFU since the previous look: carol leaving f
    /// only counts while alice is sending f (Chromium pauses f by itself when its own send
    /// estimate dips on a loaded host; that is not the SFU downgrading carol for bob).
    struct LayerProgress {
        let rid: String
        var lastPackets: Double?

        init(rid: String) { self.rid = rid }

        mutating func update(_ samples: [Sample], _ test: BrowserSimulcastCase, publisher: String) -> Bool {
            let packets = test.sfuVideoLayers(samples, publisher: publisher)[rid]?.packets ?? 0
            defer { lastPackets = packets }
            return lastPackets.map { packets > $0 } ?? true
        }
    }

    /// Freezes of one received video: stalls of framesDecoded between polls, and getStats'
    /// own freeze accounting (a freeze: a frame gap > max(3 × mean, mean + 150 ms), webrtc-stats).
    struct FreezeWatch {
        var lastFrames: Double
        var lastProgress: Date
        var lastCount: Double
        var lastDuration: Double
        var longestStall = 0.0
        /// Longest getStats freeze: a poll's added duration over its added count (exact when one
        /// freeze ends per 200 ms poll; several ending in one poll are each short anyway).
        var longestFreeze = 0.0
        var freezes = 0.0
        var freezeSeconds = 0.0

        init(start: BrowserSimulcastCase.Inbound, now: Date) {
            lastFrames = start.framesDecoded
            lastProgress = now
            lastCount = start.freezeCount
            lastDuration = start.totalFreezesDuration
        }

        mutating func observe(_ video: BrowserSimulcastCase.Inbound, now: Date) {
            if video.framesDecoded > lastFrames {
                lastFrames = video.framesDecoded
                lastProgress = now
            }
            longestStall = max(longestStall, now.timeIntervalSince(lastProgress))
            let count = video.freezeCount - lastCount
            let duration = video.totalFreezesDuration - lastDuration
            if count > 0 { longestFreeze = max(longestFreeze, duration / count) }
            freezes += count
            freezeSeconds += duration
            lastCount = video.freezeCount
            lastDuration = video.totalFreezesDuration
        }
    }
}
