// Module Peer.
