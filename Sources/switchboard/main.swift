import CTCMalloc
import Glibc
import Server

// Keeps the link to tcmalloc (CTCMalloc), whose `malloc` then serves the whole process:
// it comes before libc.so.6 in the executable's DT_NEEDED list (docs/benchmarks.md,
// "tcmalloc as the server's allocator"). The server logs which allocator runs (`allocator`).
_ = sb_tcmalloc_version()
SwitchboardCLI.serveHandler = SwitchboardServer.serve
exit(SwitchboardCLI.main(Array(CommandLine.arguments.dropFirst())))
