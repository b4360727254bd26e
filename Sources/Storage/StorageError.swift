/// Errors of the call store. Closed set; `code` is a stable string for logs and metrics.
public enum StorageError: Error, Equatable, Sendable {
    /// The call's stored revision is not the expected one (`current` is nil if the call does
    /// not exist). Nothing of the commit was written; reload and retry.
    case revisionConflict(current: Int64?)
    /// The commit's processed event (account, device, eventID) is already recorded. Nothing of
    /// the commit was written; look up the stored result instead.
    case duplicateEvent
    /// The commit itself is inconsistent (e.g. call ID mismatch, revision not increasing).
    case invalidCommit(String)
    /// Stored data is unreadable (SQLITE_CORRUPT or a row that violates the schema's intent).
    case corrupt(String)
    /// The file exists but is not an SQLite database (SQLITE_NOTADB).
    case notADatabase(path: String)
    /// The database (or its parent directory) could not be opened or created.
    case cannotOpen(path: String, message: String)
    /// The database was written by a newer Switchboard (`PRAGMA user_version` > supported).
    case schemaTooNew(found: Int, supported: Int)
    /// The store was closed.
    case closed
    /// Any other SQLite failure, with its extended result code (https://sqlite.org/rescode.html).
    case sqlite(code: Int32, message: String)

    /// Stable identifier of the error kind.
    public var code: String {
        switch self {
        case .revisionConflict: return "revision_conflict"
        case .duplicateEvent: return "duplicate_event"
        case .invalidCommit: return "invalid_commit"
        case .corrupt: return "corrupt"
        case .notADatabase: return "not_a_database"
        case .cannotOpen: return "cannot_open"
        case .schemaTooNew: return "schema_too_new"
        case .closed: return "closed"
        case .sqlite: return "sqlite"
        }
    }
}

extension StorageError: CustomStringConvertible {
    /// For logs and `switchboard serve`'s exit message: the code, then the particulars.
    public var description: String {
        switch self {
        case .revisionConflict(let current): "\(code): stored revision \(current.map { String($0) } ?? "none")"
        case .duplicateEvent, .closed: code
        case .invalidCommit(let message), .corrupt(let message): "\(code): \(message)"
        case .notADatabase(let path): "\(code): \(path)"
        case .cannotOpen(let path, let message): "\(code): \(path): \(message)"
        case .schemaTooNew(let found, let supported): "\(code): schema version \(found), this build reads up to \(supported)"
        case .sqlite(let result, let message): "\(code) \(result): \(message)"
        }
    }
}
