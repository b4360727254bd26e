// Module IO.
