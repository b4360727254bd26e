/// What a connection knows of a live call it wrote (``SQLiteConnection/knownCalls``): the
/// stored revision, participants and terminal flag, valid while it holds the write lock
/// and no other connection committed since it last looked (`PRAGMA data_version`).
struct KnownCall: Equatable {
    var revision: Int64
    var accounts: [String]
    var isTerminal: Bool
}
