import Glibc
import Server

SwitchboardCLI.serveHandler = SwitchboardServer.serve
exit(SwitchboardCLI.main(Array(CommandLine.arguments.dropFirst())))
