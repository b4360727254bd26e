/// Schema of `SQLiteCallStore`, versioned with `PRAGMA user_version`
/// (https://sqlite.org/pragma.html#pragma_user_version).
///
/// Append-only: migration N (1-based) moves the schema from version N-1 to N and is applied in
/// its own BEGIN IMMEDIATE transaction together with the version bump. Never edit a shipped
/// migration; add a new one.
enum SQLiteMigrations {
    static let steps: [String] = [
        // 1: initial schema. STRICT tables (SQLite ≥ 3.37) reject wrongly typed values.
        // WITHOUT ROWID everywhere (https://sqlite.org/withoutrowid.html): every table has a
        // natural primary key, and a rowid table would keep a second B-tree for it, i.e. one
        // more dirty page per insert on the commit hot path. Rows here are small (a call
        // state is ~0.5–2 KB); larger ones spill to overflow pages as in a rowid table.
        """
        CREATE TABLE calls (
            call_id     TEXT    NOT NULL PRIMARY KEY,
            revision    INTEGER NOT NULL,
            state       BLOB    NOT NULL,
            is_terminal INTEGER NOT NULL,
            created_at  INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        -- Retention scan of tombstones only.
        CREATE INDEX calls_terminal_updated_at ON calls(updated_at) WHERE is_terminal = 1;

        CREATE TABLE call_participants (
            call_id  TEXT    NOT NULL REFERENCES calls(call_id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            account  TEXT    NOT NULL,
            PRIMARY KEY (call_id, position)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX call_participants_account ON call_participants(account, call_id);

        CREATE TABLE processed_events (
            account      TEXT    NOT NULL,
            device       TEXT    NOT NULL,
            event_id     TEXT    NOT NULL,
            payload_hash TEXT    NOT NULL,
            result       BLOB    NOT NULL,
            processed_at INTEGER NOT NULL,
            PRIMARY KEY (account, device, event_id)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX processed_events_processed_at ON processed_events(processed_at);

        CREATE TABLE outbox (
            account    TEXT    NOT NULL,
            device     TEXT    NOT NULL,
            seq        INTEGER NOT NULL,
            payload    BLOB    NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (account, device, seq)
        ) STRICT, WITHOUT ROWID;

        -- Per-device seq assignment and acknowledgement cursor. Never deleted, so seqs are
        -- never reused even after every entry has been trimmed.
        CREATE TABLE outbox_cursors (
            account   TEXT    NOT NULL,
            device    TEXT    NOT NULL,
            last_seq  INTEGER NOT NULL,
            acked_seq INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (account, device)
        ) STRICT, WITHOUT ROWID;

        CREATE TABLE devices (
            account       TEXT    NOT NULL,
            device        TEXT    NOT NULL,
            registered_at INTEGER NOT NULL,
            last_seen_at  INTEGER NOT NULL,
            PRIMARY KEY (account, device)
        ) STRICT, WITHOUT ROWID;

        -- No foreign key to calls: a deadline may be set in the same step that inserts the call,
        -- and purge removes deadlines of purged calls explicitly.
        CREATE TABLE deadlines (
            call_id TEXT    NOT NULL,
            kind    TEXT    NOT NULL,
            due_at  INTEGER NOT NULL,
            PRIMARY KEY (call_id, kind)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX deadlines_due_at ON deadlines(due_at, call_id, kind);
        """,
        // 2: `activeCalls(involving:)` (every invite asks it for the callee) walked every call
        // the account was ever in through call_participants_account and joined each to
        // `calls` to drop the ended ones: O(calls in the retention window) per invite, ~5 %
        // of the hub's CPU 15 s into a benchmark and growing. Participant rows now carry
        // their call's terminal flag and a partial index holds only live calls' rows, so
        // the lookup reads the account's live calls only; the index over every row goes
        // (no other query used it), one index write fewer per participant.
        """
        ALTER TABLE call_participants ADD COLUMN is_terminal INTEGER NOT NULL DEFAULT 0;
        UPDATE call_participants SET is_terminal = 1
            WHERE call_id IN (SELECT call_id FROM calls WHERE is_terminal = 1);
        DROP INDEX call_participants_account;
        CREATE INDEX call_participants_live ON call_participants(account, call_id) WHERE is_terminal = 0;
        """,
        // 3: the session descriptions (SDP offer/answer, 2.5–3 KB each) leave the call row.
        // The call row is rewritten on every step of a call (ringing per device, answer,
        // every candidate, mediaConnected, hangup: ~11 per benchmark setup), and SQLite
        // rewrites a row as a whole, overflow pages included, so each step wrote 3–6 KB of
        // SDP again (profile: the call row ~9 % of the server's CPU). Here the descriptions
        // are written only by the steps that change them (invite, answer, renegotiation).
        // No foreign key: the FK check would cost a lookup of the call per write; purge
        // deletes these rows with their call explicitly, as it does deadlines.
        """
        CREATE TABLE call_descriptions (
            call_id TEXT NOT NULL PRIMARY KEY,
            body    BLOB NOT NULL
        ) STRICT, WITHOUT ROWID;
        """,
        // 4: no schema change. From here on an append no longer bumps
        // `outbox_cursors.last_seq` (the last seq is derived, see `SQLiteCallStore.append`);
        // a build that still reads `last_seq` as the counter would reuse seqs, so the
        // version bump keeps such builds out (`schemaTooNew`).
        "SELECT 1",
        // 5: a payload that one step sends to several devices (`call.incoming` with its
        // ~3 KB SDP offer to every callee device) is stored once, in `outbox_payloads`, and
        // the entries reference it (`payload_id`; their own `payload` is then empty). In the
        // WITHOUT ROWID outbox a record over ~1 KB spills to its own overflow chain, so each
        // copy cost a leaf cell plus 3 overflow pages written to the WAL (and freed again on
        // ack); in a rowid table the payload is one cell of the rightmost leaf. The partial
        // index serves only the purge of payloads no entry references any more.
        """
        CREATE TABLE outbox_payloads (
            id   INTEGER PRIMARY KEY,
            body BLOB    NOT NULL
        ) STRICT;
        ALTER TABLE outbox ADD COLUMN payload_id INTEGER;
        CREATE INDEX outbox_payload_id ON outbox(payload_id) WHERE payload_id IS NOT NULL;
        """,
    ]

    /// Highest schema version this build understands.
    static var supportedVersion: Int { steps.count }

    /// Brings the database to `supportedVersion`, or throws `schemaTooNew`.
    static func migrate(_ connection: SQLiteConnection) throws {
        let found = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        if found > supportedVersion {
            throw StorageError.schemaTooNew(found: found, supported: supportedVersion)
        }
        for (index, script) in steps.enumerated() where index >= found {
            let target = index + 1
            try connection.immediateTransaction {
                // Re-read under the write lock: another process may have migrated meanwhile.
                let current = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
                if current > supportedVersion {
                    throw StorageError.schemaTooNew(found: current, supported: supportedVersion)
                }
                guard current < target else { return }
                try connection.executeScript(script)
                // PRAGMA values cannot be bound; `target` is an Int we computed.
                try connection.executeScript("PRAGMA user_version = \(target)")
            }
        }
    }
}
