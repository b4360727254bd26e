extension WebClient {
    /// Rooms through the SFU (docs/protocol.md §9): one RTCPeerConnection to the server, the
    /// device offers its tracks first; server offers (generation) are answered; the device is
    /// the polite peer and rolls back its own pending offer. A <video> per remote stream
    /// (stream id = member `account/device`), removed on room.memberLeft.
    static let roomScript = #"""
    let roomPC = null, roomGeneration = 0, reofferWanted = false, offering = false, answeredDuringOffer = false;
    const memberKey = (m) => m ? (m.account + "/" + m.device) : "";

    function renderMembers() {
      $("room-members").textContent = sb.members.join(", ");
      $("room-state").textContent = sb.room ? ("in " + sb.room + " (" + sb.roomState + ")") : "";
      $("join-btn").hidden = !!sb.room; $("leave-btn").hidden = !sb.room;
      $("ring-btn").disabled = !sb.room;
    }

    function closeRoomPC() {
      if (roomPC) roomPC.close();
      roomPC = sb._roomPC = null;
      for (const id of sb.remoteStreams) removeTile("room:" + id);
      sb.remoteStreams = [];
    }

    // Every negotiation step (our offer, answering the server's) runs on one chain, like the
    // W3C operations chain: interleaving createOffer with a server offer's
    // setRemoteDescription leaves the connection in the wrong signaling state.
    let negotiationChain = Promise.resolve();
    function serialized(step) {
      const run = negotiationChain.then(step, step);
      negotiationChain = run.catch(() => {});
      return run;
    }

    /** Sends our offer; retried after a glare once the server's offer is answered. */
    function roomOffer() { return serialized(roomOfferStep); }

    async function roomOfferStep() {
      if (!roomPC || offering) { reofferWanted = true; return; }
      offering = true; reofferWanted = false; answeredDuringOffer = false;
      const pc = roomPC;
      try {
        const offer = await pc.createOffer();
        await pc.setLocalDescription(offer);
        const r = await command("sfu.offer", { room: sb.room, sdp: pc.localDescription.sdp });
        if (pc !== roomPC) return;
        if (r.status === "accepted") {
          if (pc.signalingState !== "have-local-offer") { reofferWanted = true; return; }   // rolled back meanwhile
          roomGeneration = r.generation || roomGeneration;
          await pc.setRemoteDescription({ type: "answer", sdp: remoteSDP(r.sdp) });
          await simulcastFallback(pc, r.sdp);
          sb.roomState = "negotiated";
        } else if (r.code === "glare") {
          reofferWanted = true;   // the server's offer is on its way; offer again after answering it
        } else {
          sb.roomState = r.code === "mediaUnavailable" ? "mediaUnavailable" : ("rejected: " + r.code);
          if (pc.signalingState === "have-local-offer") await pc.setLocalDescription({ type: "rollback" });
        }
      } finally {
        offering = false;
        renderMembers();
        // Our offer was rolled back for a server offer that has been answered meanwhile:
        // publish again now (the sfu.offer handler could not, an offer was in flight).
        if (reofferWanted && answeredDuringOffer && pc === roomPC && pc.signalingState === "stable") roomOffer();
      }
    }

    sb.joinRoom = async function (name) {
      if (sb.room) await sb.leaveRoom();
      const stream = await media();
      const r = await command("room.join", { room: name });
      if (r.status !== "accepted") throw new Error("join refused: " + r.code);
      sb.room = name; sb.roomState = "joined";
      sb.members = (r.members || []).map(memberKey);
      const pc = roomPC = sb._roomPC = new RTCPeerConnection({ iceServers: [], bundlePolicy: "max-bundle", rtcpMuxPolicy: "require" });
      // sendonly: we publish on our m-lines and receive on the server's (its offers are
      // sendonly, so they never take over these transceivers, webrtc-pc §4.4.1.6).
      for (const t of stream.getTracks()) pc.addTransceiver(t, sendInit(t, stream));
      pc.ontrack = (e) => {
        const s = e.streams[0];
        if (!s) return;
        // The stream id is the publisher "account/device" percent-encoded into an SDP token
        // ("alice%2Flaptop", RFC 8830 msid-id); decode it back to the member key.
        let id = s.id;
        try { id = decodeURIComponent(s.id); } catch (err) { /* not ours: keep it as written */ }
        if (!sb.remoteStreams.includes(id)) sb.remoteStreams.push(id);
        if (e.transceiver && e.transceiver.mid) sb.streamOfMid[e.transceiver.mid] = id;   // stats() labels inbound video
        videoTile("room:" + id, id).srcObject = s;
        if (e.track.kind === "video") watchTileSize(e.transceiver, id, videoTile("room:" + id, id));   // sfu.preferences
        s.onremovetrack = () => { if (s.getTracks().length === 0) { removeTile("room:" + id); sb.remoteStreams = sb.remoteStreams.filter((x) => x !== id); } };
      };
      pc.onconnectionstatechange = () => {
        sb.roomConnectionState = pc.connectionState; renderMembers();
        if (pc.connectionState === "connected" && sb._roomConnected) sb._roomConnected();
      };
      renderMembers();
      await roomOffer();
      return sb.members;
    };

    sb.leaveRoom = async function () {
      if (!sb.room) return;
      const room = sb.room;
      sb.room = null; sb.roomState = "none"; sb.members = [];
      closeRoomPC();
      renderMembers();
      try { await command("room.leave", { room }); } catch (err) { note(err.message); }
    };

    handlers["sfu.offer"] = (msg) => serialized(() => answerServerOffer(msg));

    async function answerServerOffer(msg) {
      if (!roomPC || msg.room !== sb.room) return;
      const pc = roomPC;
      // Polite peer (W3C perfect negotiation): our pending offer yields to the server's.
      if (pc.signalingState === "have-local-offer") {
        await pc.setLocalDescription({ type: "rollback" });
        reofferWanted = true;
      }
      await pc.setRemoteDescription({ type: "offer", sdp: remoteSDP(msg.sdp) });
      const answer = await pc.createAnswer();
      await pc.setLocalDescription(answer);
      roomGeneration = msg.generation;
      const r = await command("sfu.answer", { room: msg.room, generation: msg.generation, sdp: answer.sdp });
      if (r.status !== "accepted") note("sfu.answer refused: " + r.code);
      else sb.roomState = "negotiated";
      if (offering) answeredDuringOffer = true;
      renderMembers();
      if (reofferWanted && pc === roomPC) roomOffer();
    }
    handlers["room.memberJoined"] = async (msg) => {
      if (msg.room !== sb.room) return;
      const k = memberKey(msg.member);
      if (!sb.members.includes(k)) sb.members.push(k);
      renderMembers();
    };
    handlers["room.memberLeft"] = async (msg) => {
      if (msg.room !== sb.room) return;
      const k = memberKey(msg.member);
      sb.members = sb.members.filter((x) => x !== k);
      removeTile("room:" + k);
      sb.remoteStreams = sb.remoteStreams.filter((x) => x !== k);
      renderMembers();
    };

    $("join-btn").onclick = () => sb.joinRoom($("room-name").value.trim()).catch((err) => note(err.message));
    $("leave-btn").onclick = () => sb.leaveRoom().catch((err) => note(err.message));
    renderMembers();
    """#
}
