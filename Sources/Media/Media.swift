// Module Media.
