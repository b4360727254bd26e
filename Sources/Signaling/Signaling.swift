// Module Signaling.
