// Module SFU.
