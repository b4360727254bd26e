import Glibc
import Server
exit(SwitchboardCLI.main(Array(CommandLine.arguments.dropFirst())))
