extension WebClient {
    /// Adaptive receive in rooms: for every received video track the page tells the SFU how
    /// large it renders it (`sfu.preferences`, docs/protocol.md §9), so the SFU forwards the
    /// lowest simulcast layer that covers the tile instead of the largest the downlink allows
    /// (LiveKit's "adaptive stream" does the same).
    ///
    /// A `ResizeObserver` watches each remote tile's `<video>`; its size in device pixels
    /// (CSS pixels × `devicePixelRatio`) is sent 500 ms after the last resize, and only when
    /// it differs from the last size sent for that track by more than 15 % in width or
    /// height. The track is named by the msid track id of its section in the server's
    /// offer (`<n>-<mid>`), read when the command is sent, so a recycled m-line (a new
    /// publisher on a freed section) is named correctly.
    ///
    /// `window.switchboard.preferences` holds the last preference per tile (tests read it).
    /// `?adaptive=0` sends none: the SFU then chooses from the downlink estimate alone (tests
    /// of bandwidth-driven switching, whose 240x180 tiles would otherwise cap every subscriber
    /// at the layer covering 240x180).
    static let preferencesScript = #"""
    // 500 ms: a window resize or a layout transition fires a callback per frame; one command
    // once the size has settled. The protocol's rate limit (50/s) is never approached.
    const PREFERENCE_DEBOUNCE_MS = 500;
    // 15 %: simulcast layers differ by 2x per side, so a smaller change seldom moves the
    // covering layer; sending every step of a drag or a layout transition would only cost
    // commands.
    const PREFERENCE_CHANGE = 0.15;
    // 16383: the protocol's bound (largest VP8 frame dimension).
    const PREFERENCE_MAX = 16383;
    // 2 s, 3 times: a preference sent while the server's offer for the track is still being
    // answered may find no track yet; a few retries cover a renegotiation round trip.
    const PREFERENCE_RETRY_MS = 2000, PREFERENCE_RETRIES = 3;
    sb.preferences = {};
    sb.adaptive = params.get("adaptive") !== "0";
    const preferenceWatch = new Map();   // <video> → { observer, timer, transceiver, publisher, sent }

    /** Watches the rendered size of `video`, which shows `publisher`'s track received on `transceiver`. */
    function watchTileSize(transceiver, publisher, video) {
      if (!sb.adaptive || !transceiver || typeof ResizeObserver === "undefined") return;
      let watch = preferenceWatch.get(video);
      if (watch) {
        // A new track on this tile (the publisher republished, or its section was renegotiated):
        // the server's subscription may be new, so state the preference again.
        Object.assign(watch, { transceiver, publisher, sent: null, retries: 0 });
        return schedulePreference(video, watch, PREFERENCE_DEBOUNCE_MS);
      }
      watch = { observer: null, timer: null, transceiver, publisher, sent: null, retries: 0 };
      watch.observer = new ResizeObserver(() => schedulePreference(video, watch, PREFERENCE_DEBOUNCE_MS));
      preferenceWatch.set(video, watch);
      watch.observer.observe(video);
      // Also once without a resize: a background tab runs no rendering steps, so its
      // ResizeObserver stays silent until the tab is shown, while timers still run.
      schedulePreference(video, watch, PREFERENCE_DEBOUNCE_MS);
    }

    /** (Re)starts the tile's timer: the preference goes out `ms` after the last call. */
    function schedulePreference(video, watch, ms) {
      clearTimeout(watch.timer);
      watch.timer = setTimeout(() => sendPreference(video, watch), ms);
    }

    /** The msid track id of the server's section `mid` when it carries `publisher`'s stream. */
    function forwardedTrackID(mid, publisher) {
      const pc = sb._roomPC;
      if (!pc || !pc.remoteDescription || !mid) return null;
      const m = /^a=msid:(\S+) (\S+)/m.exec(sdpSection(pc.remoteDescription.sdp, mid));
      if (!m) return null;
      let stream = m[1];
      try { stream = decodeURIComponent(stream); } catch (err) { /* keep as written */ }
      return stream === publisher ? m[2] : null;
    }

    async function sendPreference(video, watch) {
      if (!video.isConnected) {   // the tile was removed (member left, room closed)
        watch.observer.disconnect(); clearTimeout(watch.timer); preferenceWatch.delete(video);
        delete sb.preferences[watch.publisher];
        return;
      }
      const rect = video.getBoundingClientRect();
      const scale = window.devicePixelRatio || 1;
      const width = Math.min(PREFERENCE_MAX, Math.round(rect.width * scale));
      const height = Math.min(PREFERENCE_MAX, Math.round(rect.height * scale));
      if (width < 1 || height < 1 || !sb.room) return;
      const retry = () => { if (++watch.retries <= PREFERENCE_RETRIES) schedulePreference(video, watch, PREFERENCE_RETRY_MS); };
      const track = forwardedTrackID(watch.transceiver.mid, watch.publisher);
      if (!track) return retry();
      const last = watch.sent;
      if (last && last.track === track && Math.abs(width - last.maxWidth) <= last.maxWidth * PREFERENCE_CHANGE &&
          Math.abs(height - last.maxHeight) <= last.maxHeight * PREFERENCE_CHANGE) return;
      const fields = { room: sb.room, publisher: watch.publisher, track, maxWidth: width, maxHeight: height };
      watch.sent = Object.assign({}, fields);
      try {
        const r = await command("sfu.preferences", fields);
        sb.preferences[watch.publisher] = Object.assign(fields, { status: r.status, code: r.code || null });
        if (r.status === "accepted") { watch.retries = 0; return; }
        note("sfu.preferences refused: " + r.code);
        watch.sent = null;
        if (r.code === "unknownTrack") retry();
      } catch (err) {
        watch.sent = null;   // not delivered (disconnected, timed out): try again
        retry();
      }
    }
    """#
}
