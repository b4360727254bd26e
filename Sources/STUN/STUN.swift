// Module STUN.
