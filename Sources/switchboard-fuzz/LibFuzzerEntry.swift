#if FUZZING
#if canImport(Glibc)
import Glibc
#endif
/// libFuzzer mode (`-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer`): SwiftPM renames an
/// executable's `main`, so libFuzzer's own `main` is never linked; `FuzzMain` calls
/// `LLVMFuzzerRunDriver` (compiler-rt, LLVM ≥ 12) instead, which calls this entry per input.
/// An invariant failure traps so libFuzzer records the input as a crash artifact.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = LibFuzzerDriver.target else { return -1 }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    do throws(FuzzFailure) {
        try target.run(bytes)
    } catch {
        fatalError("fuzz target \(target.name): \(error.message)")
    }
    return 0
}

typealias LibFuzzerCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: LibFuzzerCallback
) -> CInt

enum LibFuzzerDriver {
    /// Set once before `LLVMFuzzerRunDriver` starts; libFuzzer is single-threaded.
    nonisolated(unsafe) static var target: FuzzTarget?

    /// Picks the target from `FUZZ_TARGET` or the first argument that names one, removes that
    /// argument, and hands the rest (corpus directories, `-max_total_time=…`) to libFuzzer.
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        var rest = arguments
        if let name = environment["FUZZ_TARGET"], let chosen = FuzzTarget.named(name) {
            target = chosen
        } else if let index = rest.indices.dropFirst().first(where: { FuzzTarget.named(rest[$0]) != nil }) {
            target = FuzzTarget.named(rest[index])
            rest.remove(at: index)
        }
        guard let chosen = target else {
            print("usage: FUZZ_TARGET=<target> \(arguments.first ?? "switchboard-fuzz") [libFuzzer flags] [corpus dirs]")
            print("targets: " + FuzzTarget.all.map(\.name).joined(separator: " "))
            return 2
        }
        print("switchboard-fuzz: libFuzzer on target \(chosen.name)")
        var pointers: [UnsafeMutablePointer<CChar>?] = rest.map { strdup($0) } + [nil]
        var argc = CInt(rest.count)
        return pointers.withUnsafeMutableBufferPointer { buffer in
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = buffer.baseAddress
            return LLVMFuzzerRunDriver(&argc, &argv, fuzzTestOneInput)
        }
    }
}
#endif
