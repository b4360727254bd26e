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
        // 6, (a) processed events: a rowid table, so every step's record is appended at the
        // rightmost leaf, with a narrow UNIQUE index for the (account, device, eventID)
        // lookup and the duplicate check (the insert's ON CONFLICT target). Keyed by that
        // triple (WITHOUT ROWID), each ~230-byte record landed in a random, packed leaf and
        // SQLite's rebalancing of full siblings dirtied ~2 leaves per insert (WAL frames of
        // a 2,000-setup replay: 51 % processed_events leaves, 10 % its processed_at index,
        // 8 % its interior pages). The ~55-byte index entries fill a leaf ~4× less often.
        // The processed_at index goes: retention deletes from the low end of the rowid
        // order (see `purge`).
        //
        // (b) calls: a rowid table with call_id UNIQUE, so a call's row sits where it was
        // inserted, next to the other recent calls: the calls in progress, whose rows every
        // step rewrites, share the rightmost few leaves instead of one random leaf each
        // (replay: 6 call-leaf frames per commit of ~6.5 steps). The conditional UPDATE
        // finds the row through the unique index, which it never changes. Rebuilt with
        // foreign keys off (`SQLiteCallStore.init` turns them on after migrating), so the
        // old table's DROP does not cascade to the participants, whose REFERENCES calls
        // then names the new table.
        //
        // (c) the outbox becomes an append-only log, one row per step holding all of its
        // entries (`OutboxLogRecord`, each distinct payload once), found through an
        // in-memory index rebuilt from the unacknowledged rows (`OutboxIndex`). Keyed by
        // device, each recipient of a step dirtied its own leaf (and each acknowledgement
        // the same leaf again to delete): ~4 dirty pages per step in the WAL. A rowid
        // table appends every step's row to the rightmost leaf. `moveOutboxToLog` then
        // moves the backlog over and drops the old tables.
        """
        CREATE TABLE outbox_log (
            id         INTEGER PRIMARY KEY,
            created_at INTEGER NOT NULL,
            entries    BLOB    NOT NULL
        ) STRICT;
        CREATE TABLE processed_events_log (
            id           INTEGER PRIMARY KEY,
            account      TEXT    NOT NULL,
            device       TEXT    NOT NULL,
            event_id     TEXT    NOT NULL,
            payload_hash TEXT    NOT NULL,
            result       BLOB    NOT NULL,
            processed_at INTEGER NOT NULL
        ) STRICT;
        INSERT INTO processed_events_log (account, device, event_id, payload_hash, result, processed_at)
            SELECT account, device, event_id, payload_hash, result, processed_at FROM processed_events
            ORDER BY processed_at;
        DROP TABLE processed_events;
        ALTER TABLE processed_events_log RENAME TO processed_events;
        CREATE UNIQUE INDEX processed_events_key ON processed_events(account, device, event_id);

        CREATE TABLE calls_log (
            id          INTEGER PRIMARY KEY,
            call_id     TEXT    NOT NULL UNIQUE,
            revision    INTEGER NOT NULL,
            state       BLOB    NOT NULL,
            is_terminal INTEGER NOT NULL,
            created_at  INTEGER NOT NULL,
            updated_at  INTEGER NOT NULL
        ) STRICT;
        INSERT INTO calls_log (call_id, revision, state, is_terminal, created_at, updated_at)
            SELECT call_id, revision, state, is_terminal, created_at, updated_at FROM calls ORDER BY created_at, call_id;
        DROP TABLE calls;
        ALTER TABLE calls_log RENAME TO calls;
        CREATE INDEX calls_terminal_updated_at ON calls(updated_at) WHERE is_terminal = 1;
        """,
        // 7: the processed-event key starts with the eventID: (event_id, account, device).
        // Same uniqueness and the same lookups (equality on all three columns). Keyed by
        // account and device first, each device's entries sat together, so a batch dirtied
        // one index leaf per device it had events from (the largest share of a batch's WAL
        // frames, docs/benchmarks.md "Pages per committed step"). With time-ordered eventIDs
        // (UUIDv7, ULID; docs/protocol.md recommends them) every new entry now lands at the
        // right edge, and a batch's entries share a leaf; random or per-device IDs land
        // where they did before. Building the index reads the table once (its rows live
        // for `call.tombstone_retention`).
        """
        DROP INDEX processed_events_key;
        CREATE UNIQUE INDEX processed_events_key ON processed_events(event_id, account, device);
        """,
        // 8: call_descriptions becomes a rowid table with call_id UNIQUE, as `calls` did in
        // migration 6. WITHOUT ROWID, a row is a cell of the table's key B-tree, and its
        // 2.5–7 KB body spills to overflow pages; SQLite compares keys of such cells by
        // copying the whole payload, overflow chain included, into a buffer
        // (btree.c `sqlite3BtreeIndexMoveto`), so every lookup, upsert and delete copied
        // a few bodies: 5 % of the hub's samples at 200 pairs, three quarters of it in that
        // search and its memcpy (docs/benchmarks.md, "Session descriptions in a rowid
        // table"). https://sqlite.org/withoutrowid.html §4 advises against WITHOUT ROWID
        // for rows this large. The unique index holds only the callIDs; the body stays in
        // the table's row, read by rowid. Only live calls' bodies move over: from this
        // version on an ended call keeps none (the hub deletes them with the step that ends
        // the call), so the bodies of calls that ended before are dropped here, not kept
        // until retention purges their calls.
        """
        CREATE TABLE call_descriptions_rowid (
            id      INTEGER PRIMARY KEY,
            call_id TEXT    NOT NULL UNIQUE,
            body    BLOB    NOT NULL
        ) STRICT;
        INSERT INTO call_descriptions_rowid (call_id, body)
            SELECT d.call_id, d.body FROM call_descriptions d JOIN calls c ON c.call_id = d.call_id
            WHERE c.is_terminal = 0 ORDER BY d.call_id;
        DROP TABLE call_descriptions;
        ALTER TABLE call_descriptions_rowid RENAME TO call_descriptions;
        """,
    ]

    /// Data moves that SQL alone cannot express, run right after the script of their
    /// version, in the same transaction.
    static func hook(after version: Int, in connection: SQLiteConnection) throws {
        guard version == 6 else { return }
        try moveOutboxToLog(connection)
        // The calls table was rebuilt with foreign keys off: every participant row must
        // still have its call.
        let orphans = try connection.withUncached("PRAGMA foreign_key_check") { statement -> Int in
            var count = 0
            while try statement.step() { count += 1 }
            return count
        }
        if orphans > 0 { throw StorageError.corrupt("\(orphans) rows without their call after migration 6") }
    }

    /// Migration 6: every unacknowledged schema-5 entry becomes a log row of its own (a
    /// backlog is small: clients acknowledge within seconds), shared payloads resolved; the
    /// acknowledged ones are dropped (they were only waiting for the purge).
    static func moveOutboxToLog(_ connection: SQLiteConnection) throws {
        var rows: [(createdAt: Int64, record: OutboxLogRecord)] = []
        try connection.withUncached("""
            SELECT o.account, o.device, o.seq, IFNULL(p.body, o.payload), o.created_at FROM outbox o
            LEFT JOIN outbox_payloads p ON p.id = o.payload_id
            WHERE o.seq > IFNULL((SELECT c.acked_seq FROM outbox_cursors c
                                  WHERE c.account = o.account AND c.device = o.device), 0)
            ORDER BY o.created_at, o.account, o.device, o.seq
            """) { statement in
            while try statement.step() {
                let entry = OutboxEntry(device: StoredDeviceKey(account: statement.string(0), device: statement.string(1)),
                                        seq: statement.int64(2), payload: statement.data(3), createdAt: statement.int64(4))
                rows.append((entry.createdAt, OutboxLogRecord(entries: [entry])))
            }
        }
        // The highest seq of every device, acknowledged or not, so that the cursors keep
        // what the dropped entries counted.
        try connection.executeScript("""
            INSERT INTO outbox_cursors (account, device, last_seq, acked_seq)
            SELECT account, device, MAX(seq), 0 FROM outbox WHERE true GROUP BY account, device
            ON CONFLICT (account, device) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq);
            """)
        try connection.withUncached("INSERT INTO outbox_log (created_at, entries) VALUES (?1, ?2)") { statement in
            for row in rows {
                try statement.bind(1, row.createdAt)
                try statement.bind(2, row.record.encoded())
                try statement.run()
                statement.reset()
            }
        }
        try connection.executeScript("""
            DROP INDEX outbox_payload_id;
            DROP TABLE outbox;
            DROP TABLE outbox_payloads;
            """)
    }

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
                try hook(after: target, in: connection)
                // PRAGMA values cannot be bound; `target` is an Int we computed.
                try connection.executeScript("PRAGMA user_version = \(target)")
            }
        }
    }
}
