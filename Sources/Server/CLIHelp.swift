/// Help pages printed by `switchboard help [topic]` and `<subcommand> --help`.
public enum CLIHelp {
    public static func text(_ topic: CLIHelpTopic) -> String {
        switch topic {
        case .general:
            return """
            switchboard \(SwitchboardCLI.version): call signaling and media relay server

            Usage: switchboard <subcommand> [flags]

            Subcommands:
              serve     Run the server.
              token     Mint an access token (JWT) for an account and device.
              bench     Load a running server: switchboard bench signaling --help
              version   Print the version.
              help      Show help for a subcommand: switchboard help serve

            Exit status: 0 success, 2 usage error, 78 configuration error.
            """
        case .serve:
            return """
            Usage: switchboard serve [--config FILE] [--host ADDR] [--port N] [--db PATH] [--log-level LEVEL]

            Runs the signaling server. Settings come from, in increasing precedence: built-in
            defaults, the config file, SWITCHBOARD_* environment variables, these flags.

              --config FILE       key = value config file (default: $SWITCHBOARD_CONFIG, else none)
              --host ADDR         listen address, config key http.host (default 0.0.0.0)
              --port N            listen port, config key http.port (default 8080; 0 = any free port)
              --db PATH           SQLite database, config key database.path (default ./data/switchboard.sqlite)
              --log-level LEVEL   debug, info, warning or error, config key log.level (default info)
              -h, --help          show this help

            The access-token secret is read from token.secret_file (default ./data/token-secret)
            and created with mode 0600 on first run. See deploy/switchboard.conf for every key.
            """
        case .token:
            return """
            Usage: switchboard token --account ID --device ID [--ttl DURATION] [--secret-file FILE] [--config FILE]

            Prints an HS256 access token (JWT) on stdout, signed with the server's token secret.

              --account ID        account identifier: 1-64 of A-Z a-z 0-9 . _ - (required)
              --device ID         device identifier, same rules (required)
              --ttl DURATION      lifetime, e.g. 30m, 24h, 7d (default 24h, at most 366d)
              --secret-file FILE  read the secret from FILE instead of the configured one
              --config FILE       config file to take token.secret / token.secret_file from
              -h, --help          show this help

            The secret file is never created by this command.
            """
        case .bench:
            return """
            Usage: switchboard bench signaling [flags]

            Drives complete call setups against a running server and prints setups/s,
            events/s and latency percentiles per stage. Bounded in count and time.
            Flags: switchboard bench signaling --help
            """
        case .version:
            return """
            Usage: switchboard version

            Prints the version.
            """
        }
    }
}
