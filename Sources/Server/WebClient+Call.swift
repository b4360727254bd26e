extension WebClient {
    /// 1:1 calls, peer to peer (docs/protocol.md §4–§6): invite with an offer, ring in every
    /// tab, answer with the seen revision, trickle ICE with generation and ufrag,
    /// mediaConnected, hang up; or routed through the SFU (`media: sfu`). TURN credentials come from the invite result / call.incoming;
    /// `?relay=1` forces relay-only ICE.
    static let callScript = #"""
    const held = new Map();   // callID -> call.incoming received before caughtUp
    let callPC = null, remoteCandidates = [];

    function iceConfig(turn) {
      const config = { iceServers: [], bundlePolicy: "max-bundle" };
      if (turn && turn.uris && turn.uris.length) {
        config.iceServers.push({ urls: turn.uris, username: turn.username, credential: turn.password });
      }
      if (sb.relayOnly) config.iceTransportPolicy = "relay";
      return config;
    }

    function callRecord(callID) { return sb.calls[callID] || (sb.calls[callID] = { callID, revision: 0, generation: 1 }); }
    function seen(msg) {
      if (!msg.callID) return null;
      const c = callRecord(msg.callID);
      if (typeof msg.revision === "number" && msg.revision > c.revision) c.revision = msg.revision;
      const snap = msg.snapshot;
      if (snap && typeof snap.generation === "number") c.generation = snap.generation;
      return c;
    }
    function setCallState(c, state, reason) {
      c.state = state; if (reason !== undefined) c.reason = reason;
      if (sb.currentCall === c.callID) {
        $("callbox").hidden = false;
        $("call-peer").textContent = c.peer || "";
        $("call-state").textContent = state + (c.reason ? " (" + c.reason + ")" : "");
      }
      renderIncoming();
    }

    function renderIncoming() {
      const box = $("incoming");
      box.textContent = "";
      for (const c of Object.values(sb.calls)) {
        if (c.role !== "callee" || sb.currentCall === c.callID) continue;
        if (!["ringing", "answeredElsewhere", "declinedElsewhere", "missed", "cancelled"].includes(c.state)) continue;
        const div = document.createElement("div");
        div.className = "ring"; div.dataset.call = c.callID;
        if (c.state === "ringing") {
          div.appendChild(document.createTextNode("Incoming call from " + c.peer + " "));
          const accept = document.createElement("button"); accept.className = "accept"; accept.textContent = "Accept";
          accept.onclick = () => sb.accept(c.callID).catch((err) => note(err.message));
          const decline = document.createElement("button"); decline.className = "decline"; decline.textContent = "Decline";
          decline.onclick = () => sb.decline(c.callID).catch((err) => note(err.message));
          div.appendChild(accept); div.appendChild(decline);
        } else {
          const text = c.state === "answeredElsewhere" ? "Call from " + c.peer + " answered on another device"
                     : c.state === "declinedElsewhere" ? "Call from " + c.peer + " declined on another device"
                     : "Missed call from " + c.peer;
          div.className = "ring done"; div.textContent = text;
        }
        box.appendChild(div);
      }
    }

    function newCallPC(c, turn) {
      closeCallPC();
      const pc = callPC = sb._callPC = new RTCPeerConnection(iceConfig(turn));
      remoteCandidates = [];
      pc.onicecandidate = (e) => {
        if (!e.candidate || !e.candidate.candidate) return;
        command("ice.candidate", { callID: c.callID, generation: c.generation, candidate: e.candidate.candidate,
                                   sdpMid: e.candidate.sdpMid, sdpMLineIndex: e.candidate.sdpMLineIndex,
                                   ufrag: e.candidate.usernameFragment })
          .then((r) => { if (r.status === "rejected") note("candidate rejected: " + r.code); })
          .catch(() => {});
      };
      pc.ontrack = (e) => { videoTile("call", "peer").srcObject = e.streams[0] || new MediaStream([e.track]); };
      pc.onconnectionstatechange = () => {
        sb.callConnectionState = pc.connectionState;
        if (pc !== callPC) return;
        if (pc.connectionState === "connected") {
          setCallState(c, "connected");
          command("call.mediaConnected", { callID: c.callID }).catch(() => {});
        } else if (pc.connectionState === "failed") {
          command("call.mediaLost", { callID: c.callID }).catch(() => {});
        }
      };
      return pc;
    }

    function closeCallPC() {
      if (callPC) { callPC.onicecandidate = null; callPC.close(); }
      callPC = sb._callPC = null;
      remoteCandidates = [];
      removeTile("call");
    }

    async function addRemoteCandidate(c) {
      const init = { candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex };
      if (c.ufrag) init.usernameFragment = c.ufrag;
      if (!callPC || !callPC.remoteDescription) { remoteCandidates.push(init); return; }
      try { await callPC.addIceCandidate(init); } catch (err) { note("candidate: " + err.message); }
    }
    async function flushCandidates() {
      const list = remoteCandidates; remoteCandidates = [];
      for (const init of list) { try { await callPC.addIceCandidate(init); } catch (err) { note("candidate: " + err.message); } }
    }

    function endCall(c, state, reason) {
      if (sb.currentCall === c.callID) {
        closeCallPC();
        if (sb.room === c.callID) sb.leaveRoom().catch(() => {});
        sb.currentCall = null;
        setCallState(c, state, reason);
        $("callbox").hidden = false;
        $("call-state").textContent = state + (reason ? " (" + reason + ")" : "");
      } else {
        setCallState(c, state, reason);
      }
    }

    /** Calls `callee`: offer first, then TURN-configured gathering once the invite is accepted. */
    sb.call = async function (callee, options) {
      if ((options && options.sfu) || (!options && $("via-server").checked)) return callViaServer(callee);
      const stream = await media();
      const tmp = { callID: null, generation: 1 };
      const pc = newCallPC(tmp, null);
      for (const t of stream.getTracks()) pc.addTrack(t, stream);
      const offer = await pc.createOffer();
      const r = await command("call.invite", { callee, sdp: offer.sdp });
      if (r.status !== "accepted") {
        closeCallPC();
        // Glare (protocol §6): the callee is already calling us; answer that call instead.
        const existing = r.code === "glare" && r.snapshot && sb.calls[r.snapshot.callID];
        if (existing && existing.state === "ringing") { await sb.accept(existing.callID); return existing.callID; }
        throw new Error("call refused: " + r.code);
      }
      const c = seen(r);
      Object.assign(tmp, c); sb.calls[r.callID] = tmp;
      tmp.role = "caller"; tmp.peer = callee;
      sb.currentCall = r.callID;
      // Gathering starts at setLocalDescription, so the TURN servers from the result apply.
      pc.setConfiguration(iceConfig(r.turn));
      await pc.setLocalDescription(offer);
      setCallState(tmp, "calling");
      return r.callID;
    };

    sb.accept = async function (callID) {
      const c = sb.calls[callID];
      if (!c || c.state !== "ringing") throw new Error("not ringing");
      if (c.media === "sfu") return acceptViaServer(c);
      const stream = await media();
      sb.currentCall = callID;
      setCallState(c, "answering");
      const pc = newCallPC(c, c.turn);
      for (const t of stream.getTracks()) pc.addTrack(t, stream);
      await pc.setRemoteDescription({ type: "offer", sdp: c.offer });
      const answer = await pc.createAnswer();
      const r = await command("call.answer", { callID, revision: c.revision, sdp: answer.sdp });
      if (r.status !== "accepted") {
        endCall(c, r.code === "staleRevision" ? "answeredElsewhere" : "ended", r.code);
        return false;
      }
      seen(r);
      await pc.setLocalDescription(answer);
      await flushCandidates();
      setCallState(c, "connecting");
      return true;
    };

    sb.decline = async function (callID) {
      const c = sb.calls[callID];
      if (!c) throw new Error("no such call");
      const r = await command("call.decline", { callID, revision: c.revision });
      endCall(c, "declined", r.status === "accepted" ? "declined" : r.code);
    };

    sb.hangup = async function () {
      const c = sb.calls[sb.currentCall];
      if (!c) return;
      const ringing = c.role === "caller" && (c.state === "calling" || c.state === "ringing");
      const r = await command(ringing ? "call.cancel" : "call.hangup", { callID: c.callID });
      endCall(c, "ended", r.status === "accepted" ? (ringing ? "cancelled" : "hangup") : r.code);
    };

    function ring(msg) {
      const c = seen(msg);
      const snap = msg.snapshot || {};
      c.role = "callee";
      c.peer = snap.caller ? snap.caller.account : "?";
      c.offer = msg.sdp; c.turn = msg.turn; c.media = snap.media || "p2p";
      if (c.state && c.state !== "ringing") return;   // already stopped by a later event
      setCallState(c, "ringing");
      command("call.ringing", { callID: c.callID }).then((r) => seen(r)).catch(() => {});
    }

    handlers["call.incoming"] = async (msg) => {
      if (!caughtUp) { held.set(msg.callID, msg); return; }   // show backlog only once caught up
      ring(msg);
    };
    handlers["_caughtUp"] = async () => {
      for (const msg of held.values()) ring(msg);
      held.clear();
    };
    handlers["call.inProgressElsewhere"] = async (msg) => { const c = seen(msg); c.role = c.role || "callerElsewhere"; c.state = "inProgressElsewhere"; };
    handlers["call.ringing"] = async (msg) => { const c = seen(msg); if (c.state === "calling") setCallState(c, "ringing"); };
    handlers["call.answered"] = async (msg) => {
      const c = seen(msg);
      if (sb.currentCall !== c.callID) return;
      if (c.media === "sfu") { setCallState(c, "connecting"); await sb.joinRoom(c.callID); return; }
      if (!callPC) return;
      await callPC.setRemoteDescription({ type: "answer", sdp: msg.sdp });
      await flushCandidates();
      if (c.state !== "connected") setCallState(c, "connecting");
    };
    handlers["call.stopRinging"] = async (msg) => {
      held.delete(msg.callID);
      const c = seen(msg);
      if (sb.currentCall === c.callID && c.state !== "answering") return;
      setCallState(c, msg.reason === "answeredElsewhere" ? "answeredElsewhere"
                    : msg.reason === "declinedElsewhere" ? "declinedElsewhere" : "missed", msg.reason);
    };
    handlers["call.state"] = async (msg) => {
      const c = seen(msg);
      c.phase = msg.snapshot && msg.snapshot.phase;
      if (c.phase === "active" && sb.currentCall === c.callID && c.state !== "connected") setCallState(c, "connected");
    };
    handlers["call.ended"] = async (msg) => {
      held.delete(msg.callID);
      const c = seen(msg);
      endCall(c, msg.missed ? "missed" : "ended", msg.reason);
    };
    handlers["ice.candidate"] = async (msg) => {
      if (sb.currentCall !== msg.callID) return;
      const list = Array.isArray(msg.candidates) ? msg.candidates : [msg];
      for (const cand of list) if (cand.candidate) await addRemoteCandidate(cand);
    };
    handlers["sdp.offer"] = async (msg) => {   // renegotiation / ICE restart from the peer
      const c = seen(msg);
      if (sb.currentCall !== c.callID || !callPC) return;
      c.generation = msg.generation;
      await callPC.setRemoteDescription({ type: "offer", sdp: msg.sdp });
      const answer = await callPC.createAnswer();
      await callPC.setLocalDescription(answer);
      await command("sdp.answer", { callID: c.callID, generation: msg.generation, sdp: answer.sdp });
    };
    handlers["sdp.answer"] = async (msg) => {
      if (sb.currentCall !== msg.callID || !callPC || callPC.signalingState !== "have-local-offer") return;
      await callPC.setRemoteDescription({ type: "answer", sdp: msg.sdp });
    };

    // SFU-routed 1:1 call (protocol §4 `media: sfu`): no SDP in the invite or the answer;
    // once answered, both parties join the room named after the callID and negotiate with
    // the server (§9). "connected" comes from the room's peer connection.
    async function callViaServer(callee) {
      await media();
      const r = await command("call.invite", { callee, media: "sfu" });
      if (r.status !== "accepted") throw new Error("call refused: " + r.code);
      const c = seen(r);
      c.role = "caller"; c.peer = callee; c.media = "sfu";
      sb.currentCall = r.callID;
      setCallState(c, "calling");
      return r.callID;
    }
    async function acceptViaServer(c) {
      await media();
      sb.currentCall = c.callID;
      setCallState(c, "answering");
      const r = await command("call.answer", { callID: c.callID, revision: c.revision });
      if (r.status !== "accepted") { endCall(c, r.code === "staleRevision" ? "answeredElsewhere" : "ended", r.code); return false; }
      seen(r);
      setCallState(c, "connecting");
      await sb.joinRoom(c.callID);
      return true;
    }
    /** The room's peer connection reached "connected": an SFU-routed call is talkable. */
    sb._roomConnected = function () {
      const c = sb.calls[sb.currentCall];
      if (!c || c.media !== "sfu" || sb.room !== c.callID || c.state === "connected") return;
      setCallState(c, "connected");
      command("call.mediaConnected", { callID: c.callID }).catch(() => {});
    };

    $("call-btn").onclick = () => sb.call($("callee").value.trim()).catch((err) => note(err.message));
    $("hangup-btn").onclick = () => sb.hangup().catch((err) => note(err.message));
    """#
}
