extension WebClient {
    /// Simulcast publishing in rooms (RFC 8853 with rids, RFC 8851; JSEP RFC 8829 §5.2.1,
    /// webrtc-pc `sendEncodings`), and the test hook that routes one page through a relay.
    ///
    /// The ladder, lowest first because the SFU takes the offer's rid order as low → high
    /// (Sources/Media SFUServer+Negotiation `trackDescription`):
    ///
    /// | rid | scale | max bitrate | at 1280x720 capture |
    /// |-----|-------|-------------|---------------------|
    /// | `q` | 1/4   | 150 kbit/s  | 320x180             |
    /// | `h` | 1/2   | 500 kbit/s  | 640x360             |
    /// | `f` | 1     | 1500 kbit/s | 1280x720            |
    ///
    /// 150/500/1500 kbit/s: libwebrtc's own defaults for these resolutions are ≈150–200 /
    /// 500–700 / 1200–2500 kbit/s (`kSimulcastFormats` in simulcast.cc); caps at the low end
    /// keep three pages on a 2-core test box encoding in real time, and leave the low layer
    /// under a 300 kbit/s downlink cap (issue 4) with room for audio and RTCP.
    ///
    /// If the server's answer does not accept simulcast (no `a=simulcast` in the section),
    /// the browser keeps only the first encoding (JSEP §5.3.1); `simulcastFallback` then lifts
    /// that encoding's 1/4 scale and bitrate cap so a single-stream publisher sends full quality.
    ///
    /// `?simulcast=0` turns simulcast off (one encoding).
    static let simulcastScript = #"""
    const SIMULCAST_LADDER = [
      { rid: "q", scaleResolutionDownBy: 4, maxBitrate: 150000 },
      { rid: "h", scaleResolutionDownBy: 2, maxBitrate: 500000 },
      { rid: "f", scaleResolutionDownBy: 1, maxBitrate: 1500000 },
    ];
    sb.simulcastLadder = SIMULCAST_LADDER;

    /** addTransceiver init for one local track of a room connection. */
    function sendInit(track, stream) {
      // sendonly: we publish on our m-lines and receive on the server's (its offers are
      // sendonly, so they never take over these transceivers, webrtc-pc §4.4.1.6).
      const init = { direction: "sendonly", streams: [stream] };
      if (track.kind === "video" && sb.simulcast) init.sendEncodings = SIMULCAST_LADDER.map((l) => Object.assign({}, l));
      return init;
    }

    /** The m-section of `sdp` with `a=mid:<mid>`, or "". */
    function sdpSection(sdp, mid) {
      for (const part of sdp.split(/\r?\nm=/).slice(1)) {
        if (part.split(/\r?\n/).some((l) => l === "a=mid:" + mid)) return part;
      }
      return "";
    }

    /** After an answer: a video sender whose simulcast was refused sends its one encoding at full quality. */
    async function simulcastFallback(pc, answerSDP) {
      if (!sb.simulcast) return;
      sb.simulcastAccepted = false;
      for (const t of pc.getTransceivers()) {
        const sender = t.sender;
        if (!sender.track || sender.track.kind !== "video" || !t.mid) continue;
        if (/^a=simulcast:/m.test(sdpSection(answerSDP, t.mid))) { sb.simulcastAccepted = true; continue; }
        const p = sender.getParameters();
        if (!p.encodings || p.encodings.length !== 1) continue;
        const e = p.encodings[0];
        if (e.scaleResolutionDownBy === 1 && e.maxBitrate === undefined) continue;
        e.scaleResolutionDownBy = 1; delete e.maxBitrate;
        try { await sender.setParameters(p); } catch (err) { note("simulcast fallback: " + err.message); }
      }
    }

    /** Remote SDP of the room connection, with the test relay port applied (see sb.test). */
    function remoteSDP(sdp) {
      const port = sb.test.sfuCandidatePort;
      if (!port) return sdp;
      // candidate-attribute (RFC 8839 §5.1): foundation component transport priority address port "typ" type
      return sdp.replace(/^(a=candidate:\S+ \d+ udp \d+ \S+ )\d+( typ )/gim, "$1" + port + "$2");
    }
    """#
}
