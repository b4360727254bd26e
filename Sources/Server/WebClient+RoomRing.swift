extension WebClient {
    /// Ringing a room's invitees (docs/protocol.md §9): `room.ring` from a member; invitees'
    /// tabs show `room.incoming` with Join / Decline (`room.accept` + `room.join`, or
    /// `room.decline`); `room.ringState` for the own account stops the other tabs ringing,
    /// and tells members how each invitee answered.
    static let roomRingScript = #"""
    sb.roomInvites = {};   // room -> {room, from, state, expiresAt, members}
    sb.ringStates = {};    // room -> {account: state} as members see it

    function renderInvites() {
      const box = $("room-invites");
      box.textContent = "";
      for (const inv of Object.values(sb.roomInvites)) {
        const div = document.createElement("div");
        div.className = "ring"; div.dataset.room = inv.room;
        if (inv.state === "ringing") {
          div.appendChild(document.createTextNode(inv.from + " invites you to room " + inv.room + " "));
          const join = document.createElement("button"); join.className = "join"; join.textContent = "Join";
          join.onclick = () => sb.acceptRoom(inv.room).catch((err) => note(err.message));
          const decline = document.createElement("button"); decline.className = "decline"; decline.textContent = "Decline";
          decline.onclick = () => sb.declineRoom(inv.room).catch((err) => note(err.message));
          div.appendChild(join); div.appendChild(decline);
        } else {
          const what = { accepted: sb.room === inv.room ? "joined" : "answered on another device",
                         declined: "declined", noAnswer: "missed", cancelled: "cancelled", busy: "busy" }[inv.state] || inv.state;
          div.className = "ring done";
          div.textContent = "Room " + inv.room + " from " + inv.from + ": " + what;
        }
        box.appendChild(div);
      }
      const states = sb.room && sb.ringStates[sb.room];
      if (states) {
        const line = document.createElement("div");
        line.textContent = "Invited: " + Object.entries(states).map(([a, s]) => a + " " + s).join(", ");
        box.appendChild(line);
      }
    }

    /** Rings `accounts` into the room this tab is in; resolves with the result's invitees. */
    sb.ringRoom = async function (accounts) {
      if (!sb.room) throw new Error("join a room first");
      const r = await command("room.ring", { room: sb.room, invitees: accounts });
      if (r.status !== "accepted") throw new Error("ring refused: " + r.code);
      const states = sb.ringStates[sb.room] || (sb.ringStates[sb.room] = {});
      for (const i of r.invitees || []) states[i.account] = i.state;
      renderInvites();
      return r.invitees || [];
    };

    sb.acceptRoom = async function (room) {
      const r = await command("room.accept", { room });
      if (r.status !== "accepted" && r.code !== "notRinging") throw new Error("accept refused: " + r.code);
      if (sb.roomInvites[room]) sb.roomInvites[room].state = "accepted";
      await sb.joinRoom(room);
      renderInvites();
    };

    sb.declineRoom = async function (room) {
      const r = await command("room.decline", { room });
      if (sb.roomInvites[room]) sb.roomInvites[room].state = "declined";
      renderInvites();
      if (r.status !== "accepted") throw new Error("decline refused: " + r.code);
    };

    handlers["room.incoming"] = async (msg) => {
      const late = typeof msg.expiresAt === "number" && msg.expiresAt < Date.now();
      sb.roomInvites[msg.room] = { room: msg.room, from: memberKey(msg.from), expiresAt: msg.expiresAt,
                                   members: (msg.members || []).map(memberKey), state: late ? "noAnswer" : "ringing" };
      renderInvites();
    };
    handlers["room.ringState"] = async (msg) => {
      if (msg.account === sb.account && sb.roomInvites[msg.room] && msg.state !== "ringing") {
        sb.roomInvites[msg.room].state = msg.state;   // another tab answered, or the ring ended
      }
      if (msg.account !== sb.account) {
        const states = sb.ringStates[msg.room] || (sb.ringStates[msg.room] = {});
        states[msg.account] = msg.state;
      }
      renderInvites();
    };

    $("ring-btn").onclick = () => sb.ringRoom($("invitees").value.split(",").map((s) => s.trim()).filter(Boolean))
      .catch((err) => note(err.message));
    """#
}
