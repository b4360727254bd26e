// Module CallCore.
