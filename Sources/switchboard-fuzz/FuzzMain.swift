import Foundation

/// Entry point of both modes; see scripts/fuzz.sh and docs/threat-model.md ("Fuzzing").
@main
struct FuzzMain {
    static func main() {
        #if FUZZING
        exit(LibFuzzerDriver.run(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment))
        #else
        let options: ReplayOptions
        do { options = try ReplayOptions(arguments: Array(CommandLine.arguments.dropFirst())) } catch {
            print("switchboard-fuzz: \(error)")
            print("usage: switchboard-fuzz [--corpus DIR] [--mutations N] [--mutations-for T=N] [--seed S] [--artifacts DIR] [--dump I] [target…|all]")
            print("targets: " + FuzzTarget.all.map(\.name).joined(separator: " "))
            exit(2)
        }
        exit(Replay.run(options))
        #endif
    }
}
