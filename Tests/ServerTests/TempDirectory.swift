import Foundation

/// A fresh directory under the system temp dir, removed by `remove()`.
struct TempDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "switchboard-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
        let target = file(name)
        try text.write(toFile: target, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target)
        return target
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
