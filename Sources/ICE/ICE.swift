// Module ICE.
