import Foundation

/// Reads the frames appended to a WAL file since the last call
/// (https://sqlite.org/fileformat2.html#walformat: a 32-byte header, then frames of a
/// 24-byte header — page number, database size after a commit frame, salts, checksums —
/// and one page). For the page-attribution benchmark: which pages each commit wrote.
/// Assumes no checkpoint restarts the WAL meanwhile (stores opened with
/// `backgroundCheckpoints: false`).
struct WALFrameReader {
    struct Frame {
        var page: UInt32
        /// Every byte of the page is zero (a page freed under `secure_delete = ON`).
        var zeroed: Bool
        /// The page's first byte: the B-tree page type (2, 5, 10, 13) for B-tree pages
        /// other than page 1; anything else for overflow and freelist pages.
        var typeByte: UInt8
    }

    let path: String
    let pageSize: Int
    private var offset: Int

    init(path: String, pageSize: Int = 4096) {
        self.path = path
        self.pageSize = pageSize
        offset = max(32, Int(SetupReplay.fileSize(path)))
    }

    /// The frames appended since the previous call (or since `init`).
    mutating func newFrames() throws -> [Frame] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let data = try handle.readToEnd() ?? Data()
        let frameSize = 24 + pageSize
        var frames: [Frame] = []
        var start = 0
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            while start + frameSize <= bytes.count {
                let page = UInt32(bytes[start]) << 24 | UInt32(bytes[start + 1]) << 16
                    | UInt32(bytes[start + 2]) << 8 | UInt32(bytes[start + 3])
                let body = UnsafeRawBufferPointer(rebasing: bytes[(start + 24) ..< (start + frameSize)])
                frames.append(Frame(page: page, zeroed: !body.contains { $0 != 0 }, typeByte: body[0]))
                start += frameSize
            }
        }
        offset += start
        return frames
    }
}
