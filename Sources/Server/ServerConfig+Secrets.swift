import Auth
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension ServerConfig {
    /// 32 bytes: RFC 7518 §3.2 requires an HS256 key of at least the hash size (256 bits).
    public static let minimumTokenSecretBytes = 32

    /// Returns the HS256 token secret.
    ///
    /// - `token.secret` set: its base64/base64url decoding (≥ 32 bytes).
    /// - otherwise `token.secret_file`: read and decoded the same way. The file must be a
    ///   regular file not accessible by "other" users (group access is allowed for deployments
    ///   that share a group with a secrets manager).
    /// - file missing and `createIfMissing`: its directory is created (0700) if needed and 32
    ///   random bytes are written base64url-encoded with mode 0600, atomically (`O_EXCL`; if
    ///   another process won the race, its file is read instead).
    ///
    /// The `token` subcommand passes `createIfMissing: false` so it never mints tokens with a
    /// secret the server does not use.
    public func resolveTokenSecret(createIfMissing: Bool = true) throws(ConfigError) -> [UInt8] {
        if let inline = token.secret {
            guard let bytes = Self.decodeSecret(inline), bytes.count >= Self.minimumTokenSecretBytes else {
                throw .tokenSecret(path: "token.secret (inline)",
                                   reason: "expected base64 or base64url of at least \(Self.minimumTokenSecretBytes) bytes")
            }
            return bytes
        }
        let path = token.secretFile
        if let bytes = try Self.readSecretFile(path) { return bytes }
        guard createIfMissing else {
            throw .tokenSecret(path: path, reason: "does not exist (run `switchboard serve` once to create it, or set token.secret_file)")
        }
        try Self.createSecretFile(path)
        guard let bytes = try Self.readSecretFile(path) else {
            throw .tokenSecret(path: path, reason: "vanished right after creation")
        }
        return bytes
    }

    /// Issuer for TURN REST credentials, or nil when `turn.secret` is unset.
    public func makeTURNCredentialIssuer() -> TURNCredentialIssuer? {
        guard let secret = turn.secret else { return nil }
        return TURNCredentialIssuer(secret: secret, ttl: ConfigValues.milliseconds(turn.ttl) / 1000, uris: turn.uris)
    }

    /// Accepts base64url or standard base64, with or without padding, surrounding blanks and
    /// a trailing newline (what `openssl rand -base64 32` prints).
    static func decodeSecret(_ text: String) -> [UInt8]? {
        var normalized = ""
        for character in text where !(character == "=" || character == "\n" || character == "\r" || character == " " || character == "\t") {
            switch character {
            case "+": normalized.append("-")
            case "/": normalized.append("_")
            default: normalized.append(character)
            }
        }
        return Base64URL.decode(normalized)
    }

    /// nil when the file does not exist.
    static func readSecretFile(_ path: String) throws(ConfigError) -> [UInt8]? {
        var info = stat()
        if stat(path, &info) != 0 {
            if errno == ENOENT { return nil }
            throw .tokenSecret(path: path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .tokenSecret(path: path, reason: "is not a regular file") }
        guard info.st_mode & 0o007 == 0 else {
            throw .tokenSecret(path: path, reason: "is accessible by other users (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .tokenSecret(path: path, reason: "cannot be read")
        }
        guard let bytes = decodeSecret(String(decoding: data, as: UTF8.self)), bytes.count >= minimumTokenSecretBytes else {
            throw .tokenSecret(path: path, reason: "must contain base64 or base64url of at least \(minimumTokenSecretBytes) bytes")
        }
        return bytes
    }

    static func createSecretFile(_ path: String) throws(ConfigError) {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw .tokenSecret(path: path, reason: "cannot create directory \(directory): \(describe(error))")
            }
        }
        let secret: [UInt8]
        do {
            secret = try SecureRandom.bytes(count: minimumTokenSecretBytes)
        } catch {
            throw .tokenSecret(path: path, reason: "no secure random bytes available")
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == EEXIST { return }  // Another process created it first; the caller reads it.
            throw .tokenSecret(path: path, reason: "cannot create: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let text = Array((Base64URL.encode(secret) + "\n").utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == text.count, fsync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw .tokenSecret(path: path, reason: "cannot write: \(reason)")
        }
    }
}
