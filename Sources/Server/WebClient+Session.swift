extension WebClient {
    /// Sign-in, the WebSocket session (hello with resume cursor, heartbeat, acks, reconnect)
    /// and command/result plumbing (docs/protocol.md §1–§5). Defines `window.switchboard`.
    static let sessionScript = #"""
    "use strict";
    const $ = (id) => document.getElementById(id);
    const params = new URLSearchParams(location.search);
    const sb = window.switchboard = {
      status: "signedOut", account: null, device: null, cursor: null,
      calls: {},          // callID -> {callID, role, peer, state, reason, revision}
      currentCall: null,  // callID of the call this tab is in (or placing)
      room: null, roomState: "none", members: [], remoteStreams: [], streamOfMid: {},
      relayOnly: params.get("relay") === "1",
      // Rooms publish video as three simulcast layers (WebClient+Simulcast.swift); ?simulcast=0 sends one.
      simulcast: params.get("simulcast") !== "0",
      // TEST SUPPORT ONLY: ?sfuCandidatePort=N rewrites the port of the server's ICE candidates
      // in every remote SDP of the room connection, so this page's media goes through a relay
      // on 127.0.0.1:N (Tests/IntegrationTests, NetEmu ImpairmentRelay). The ICE-lite server
      // answers the relay's STUN checks and so learns the relay's upstream address.
      test: { sfuCandidatePort: Number(params.get("sfuCandidatePort")) || 0 },
      log: [],
    };
    let ws = null, token = null, heartbeat = null, ackTimer = null, reconnectDelay = 1000;
    let counter = 0, chain = Promise.resolve(), caughtUp = false;
    const pending = new Map();   // eventID -> {resolve, reject, timer}
    const handlers = {};         // event type -> async function(msg)

    function note(text) { $("notice").textContent = text; sb.log.push(text); if (sb.log.length > 200) sb.log.shift(); }
    function setStatus(s) { sb.status = s; $("status").textContent = s; }
    function cursorKey() { return "sb.cursor." + sb.account + "/" + sb.device; }

    // A device name that survives reloads of this tab but differs between tabs.
    $("device").value = sessionStorage.getItem("sb.device") || ("tab-" + Math.random().toString(36).slice(2, 8));
    $("account").value = sessionStorage.getItem("sb.account") || "";

    async function devToken(account, device) {
      const r = await fetch("/v1/dev/token", { method: "POST", headers: { "content-type": "application/json" },
                                               body: JSON.stringify({ account, device }) });
      if (r.status === 404) throw new Error("development tokens are disabled on this server (auth.dev_tokens)");
      const body = await r.json();
      if (!r.ok) throw new Error("dev token refused: " + (body.error || r.status) + (body.field ? " (" + body.field + ")" : ""));
      return body.token;
    }

    /** Signs in: a pasted token wins; otherwise asks for a development token. */
    sb.signIn = async function (account, device, pasted) {
      account = (account || "").trim(); device = (device || "").trim();
      if (!account || !device) throw new Error("account and device are required");
      token = (pasted || "").trim() || await devToken(account, device);
      sb.account = account; sb.device = device;
      sessionStorage.setItem("sb.account", account); sessionStorage.setItem("sb.device", device);
      $("whoami").textContent = "as " + account + "/" + device;
      $("signout-btn").hidden = false;
      connect();
    };

    sb.signOut = function () {
      token = null; if (ws) ws.close(1000, "sign out"); ws = null; setStatus("signedOut");
      $("signout-btn").hidden = true; $("whoami").textContent = "";
    };

    function connect() {
      if (!token) return;
      const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/v1/ws";
      const socket = new WebSocket(url);
      ws = socket; caughtUp = false;
      setStatus("connecting");
      socket.onopen = () => {
        const hello = { v: 1, type: "hello", token };
        const cursor = sessionStorage.getItem(cursorKey());
        if (cursor) hello.cursor = cursor;
        sb.resumedFrom = cursor || null;   // what this connection resumed from (tests read it)
        socket.send(JSON.stringify(hello));
      };
      socket.onmessage = (e) => {
        let msg; try { msg = JSON.parse(e.data); } catch { return; }
        if (socket === ws) receive(msg);
      };
      socket.onclose = (e) => {
        if (socket !== ws) return;
        clearInterval(heartbeat); heartbeat = null;
        for (const [, p] of pending) { clearTimeout(p.timer); p.reject(new Error("connection closed")); }
        pending.clear();
        // 4001/4002: the token is bad or expired; 4003: another tab took this device over.
        if (e.code === 4001 || e.code === 4002 || e.code === 4003 || !token) {
          setStatus("disconnected (" + e.code + ")"); note("connection closed: " + e.code + " " + e.reason); return;
        }
        setStatus("reconnecting");
        setTimeout(connect, reconnectDelay);
        reconnectDelay = Math.min(reconnectDelay * 2, 10000);   // 1 s doubling, 10 s cap
      };
    }

    function receive(msg) {
      switch (msg.type) {
        case "welcome": {
          reconnectDelay = 1000;
          setStatus("connected");
          const every = (msg.heartbeat && msg.heartbeat.intervalMs) || 15000;
          clearInterval(heartbeat);
          heartbeat = setInterval(() => raw({ v: 1, type: "ping" }), every);
          return;
        }
        case "caughtUp": caughtUp = true; setStatus("ready"); enqueue({ type: "_caughtUp" }); return;
        case "pong": return;
        case "result": {
          const p = pending.get(msg.eventID);
          if (p) { pending.delete(msg.eventID); clearTimeout(p.timer); p.resolve(msg.status === "duplicate" && msg.first ? msg.first : msg); }
          return;
        }
        case "error": note("server error: " + (msg.code || "") + " " + (msg.message || "")); return;
        default: enqueue(msg);
      }
    }

    // Events are handled one at a time, in order (an SDP must be applied before the
    // candidates that follow it). Results bypass the queue so a handler may await a command.
    function enqueue(msg) {
      chain = chain.then(async () => {
        const h = handlers[msg.type];
        try { if (h) await h(msg); } catch (err) { note(msg.type + ": " + err.message); }
        if (msg.seq !== undefined) storeCursor(String(msg.seq));
      });
    }

    function storeCursor(seq) {
      sb.cursor = seq;
      sessionStorage.setItem(cursorKey(), seq);
      clearTimeout(ackTimer);
      // 200 ms: one ack covers a burst of replayed events.
      ackTimer = setTimeout(() => raw({ v: 1, type: "ack", cursor: sb.cursor }), 200);
    }

    function raw(obj) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj)); }

    /** Sends a command and resolves with its result (10 s timeout: then the outcome is unknown). */
    function command(type, fields) {
      const eventID = "w" + Date.now().toString(36) + "-" + (++counter);
      return new Promise((resolve, reject) => {
        if (!ws || ws.readyState !== 1) return reject(new Error("not connected"));
        const timer = setTimeout(() => { pending.delete(eventID); reject(new Error(type + " timed out")); }, 10000);
        pending.set(eventID, { resolve, reject, timer });
        raw(Object.assign({ v: 1, type, eventID }, fields));
      });
    }
    sb.command = command;

    let localStream = null;
    /** Camera and microphone, opened once per page. */
    async function media() {
      if (!localStream) {
        // 1280x720: libwebrtc sends three simulcast layers only from ~960x540 up (its
        // simulcast config table); at 640x480 (the default) it would cut the ladder to two.
        localStream = await navigator.mediaDevices.getUserMedia({
          audio: true, video: { width: { ideal: 1280 }, height: { ideal: 720 } } });
        $("local-video").srcObject = localStream;
      }
      return localStream;
    }

    function videoTile(id, label) {
      let tile = document.querySelector('.tile[data-id="' + CSS.escape(id) + '"]');
      if (!tile) {
        tile = document.createElement("div");
        tile.className = "tile"; tile.dataset.id = id;
        const v = document.createElement("video");
        v.autoplay = true; v.playsInline = true;
        tile.appendChild(v); tile.appendChild(document.createTextNode(label));
        $("videos").appendChild(tile);
      }
      return tile.querySelector("video");
    }
    function removeTile(id) {
      const tile = document.querySelector('.tile[data-id="' + CSS.escape(id) + '"]');
      if (tile) { const v = tile.querySelector("video"); v.srcObject = null; tile.remove(); }
    }

    /** getStats summaries of every live peer connection (tests read these). */
    sb.stats = async function () {
      const out = { audio: { packetsReceived: 0, framesDecoded: 0, bytesReceived: 0 },
                    video: { packetsReceived: 0, framesDecoded: 0, bytesReceived: 0 },
                    selected: [], pairs: [],
                    // Per stream: received video (one per remote track) and sent video (one per simulcast rid).
                    inboundVideo: [], outboundVideo: [] };
      for (const pc of [sb._callPC, sb._roomPC]) {
        if (!pc) continue;
        const report = await pc.getStats();
        const byId = new Map(); report.forEach((r) => byId.set(r.id, r));
        report.forEach((r) => {
          if (r.type === "inbound-rtp" && out[r.kind]) {
            out[r.kind].packetsReceived += r.packetsReceived || 0;
            out[r.kind].framesDecoded += r.framesDecoded || 0;
            out[r.kind].bytesReceived += r.bytesReceived || 0;
            if (r.kind === "video") {
              out.inboundVideo.push({ mid: r.mid, ssrc: r.ssrc, bytesReceived: r.bytesReceived || 0,
                                      packetsReceived: r.packetsReceived || 0, framesDecoded: r.framesDecoded || 0,
                                      frameWidth: r.frameWidth || 0, frameHeight: r.frameHeight || 0,
                                      freezeCount: r.freezeCount || 0, totalFreezesDuration: r.totalFreezesDuration || 0,
                                      packetsLost: r.packetsLost || 0, pc: pc === sb._roomPC ? "room" : "call",
                                      stream: (pc === sb._roomPC && sb.streamOfMid[r.mid]) || null });
            }
          }
          if (r.type === "outbound-rtp" && r.kind === "video") {
            out.outboundVideo.push({ rid: r.rid || null, ssrc: r.ssrc, bytesSent: r.bytesSent || 0,
                                     retransmittedBytesSent: r.retransmittedBytesSent || 0,
                                     framesEncoded: r.framesEncoded || 0, frameWidth: r.frameWidth || 0,
                                     frameHeight: r.frameHeight || 0, active: r.active !== false,
                                     qualityLimitationReason: r.qualityLimitationReason || null,
                                     targetBitrate: r.targetBitrate || 0, pc: pc === sb._roomPC ? "room" : "call" });
          }
          if (r.type === "candidate-pair") {
            const l = byId.get(r.localCandidateId), rm = byId.get(r.remoteCandidateId);
            out.pairs.push({ state: r.state, nominated: !!r.nominated,
                             local: l && l.candidateType, remote: rm && rm.candidateType });
          }
          if (r.type === "transport" && r.selectedCandidatePairId) {
            const p = byId.get(r.selectedCandidatePairId);
            const l = p && byId.get(p.localCandidateId), rm = p && byId.get(p.remoteCandidateId);
            out.selected.push({ state: p && p.state, local: l && l.candidateType, remote: rm && rm.candidateType,
                                localAddress: l && l.address, localPort: l && l.port, protocol: l && l.protocol,
                                remotePort: rm && rm.port, pc: pc === sb._roomPC ? "room" : "call",
                                availableOutgoingBitrate: (p && p.availableOutgoingBitrate) || 0 });
          }
        });
      }
      return out;
    };

    // Mute: flips the local tracks (the peer sees silence / black, no renegotiation).
    $("mute-audio").onclick = () => {
      if (!localStream) return;
      for (const t of localStream.getAudioTracks()) t.enabled = !t.enabled;
      sb.audioMuted = !localStream.getAudioTracks().every((t) => t.enabled);
      $("mute-audio").textContent = sb.audioMuted ? "Unmute microphone" : "Mute microphone";
    };
    $("mute-video").onclick = () => {
      if (!localStream) return;
      for (const t of localStream.getVideoTracks()) t.enabled = !t.enabled;
      sb.videoMuted = !localStream.getVideoTracks().every((t) => t.enabled);
      $("mute-video").textContent = sb.videoMuted ? "Start camera" : "Stop camera";
    };

    $("devtoken-btn").onclick = async () => {
      try { $("token").value = await devToken($("account").value.trim(), $("device").value.trim()); note("development token received"); }
      catch (err) { note(err.message); }
    };
    $("connect-btn").onclick = () => sb.signIn($("account").value, $("device").value, $("token").value).catch((err) => note(err.message));
    $("signout-btn").onclick = () => sb.signOut();
    """#
}
