// Module Storage.
