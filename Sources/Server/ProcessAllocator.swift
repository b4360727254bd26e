import Glibc

/// Which `malloc` this process runs on. The `switchboard` executable links gperftools'
/// tcmalloc (target `CTCMalloc`, docs/benchmarks.md "tcmalloc as the server's allocator");
/// code built into other binaries (the test bundles) runs on glibc's. Found at run time with
/// `dlsym(RTLD_DEFAULT, …)`, so this module needs no link to tcmalloc: the dynamic loader
/// binds every library's `malloc` to the first definition in load order, and tcmalloc's
/// `malloc` is an alias of its `tc_malloc` (gperftools `libc_override_gcc_and_weak.h`).
public enum ProcessAllocator {
    /// "tcmalloc 2.10" when tcmalloc serves `malloc`, otherwise "glibc".
    public static let name: String = {
        // RTLD_DEFAULT is ((void *) 0): search the global scope in load order.
        guard let malloc = dlsym(nil, "malloc"), let tcMalloc = dlsym(nil, "tc_malloc"), malloc == tcMalloc else {
            return "glibc"
        }
        typealias Version = @convention(c) (UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?,
                                            UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> UnsafePointer<CChar>?
        guard let symbol = dlsym(nil, "tc_version") else { return "tcmalloc" }
        var major: Int32 = 0, minor: Int32 = 0
        _ = unsafeBitCast(symbol, to: Version.self)(&major, &minor, nil)
        return "tcmalloc \(major).\(minor)"
    }()
}
