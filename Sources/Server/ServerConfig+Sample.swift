extension ServerConfig {
    /// A complete, commented config file listing every key with its default and meaning.
    /// `deploy/switchboard.conf` is exactly this text (a test enforces it).
    public static func sampleFile() -> String {
        let defaults = ServerConfig()
        var out = """
        # Switchboard configuration.
        #
        # Format: one `key = value` per line; lines starting with # are comments (there are no
        # inline comments). Durations take a unit: 500ms, 60s, 15m, 24h, 7d. Lists are
        # comma-separated. Every line below is commented out and shows the built-in default.
        #
        # Precedence (later wins): defaults < this file (--config FILE or SWITCHBOARD_CONFIG)
        # < environment variables < command-line flags. Each key's variable is SWITCHBOARD_ +
        # the key uppercased with dots replaced by underscores, e.g. http.port ->
        # SWITCHBOARD_HTTP_PORT.

        """
        var section = ""
        for key in ConfigKey.all {
            let prefix = String(key.name.prefix { $0 != "." })
            if prefix != section {
                out += "\n# ---- \(prefix) ----\n"
                section = prefix
            }
            out += "\n"
            for line in wrap(key.summary, width: 90) { out += "# \(line)\n" }
            out += "# Environment: \(key.environmentName)\n"
            let value = key.renderedValue(defaults)
            out += value.isEmpty ? "# \(key.name) =\n" : "# \(key.name) = \(value)\n"
        }
        return out
    }

    private static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            if !current.isEmpty, current.count + 1 + word.count > width {
                lines.append(current)
                current = ""
            }
            current += current.isEmpty ? String(word) : " " + word
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }
}
