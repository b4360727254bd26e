// Module Logging.
