import Foundation

/// Replay mode (the normal build): every corpus file, then `mutations` seeded mutations,
/// through each target's function. Returns the process exit status: 0 clean, 1 an
/// invariant failed (the input is written to `artifacts`), 2 usage or I/O error.
/// A trap (crash) in a parser ends the process with a signal, which the caller sees too.
enum Replay {
    static func run(_ options: ReplayOptions) -> Int32 {
        var failures = 0
        for name in options.targets {
            guard let target = FuzzTarget.named(name) else { return 2 }
            let directory = options.corpusRoot + "/" + name
            let seeds: [(name: String, bytes: [UInt8])]
            do { seeds = try corpus(in: directory) } catch {
                print("switchboard-fuzz: cannot read corpus \(directory): \(error)")
                return 2
            }
            let mutator = Mutator(corpus: seeds.map(\.bytes), isText: target.isText)
            let salt = saltFor(name)
            if let index = options.dump {
                let path = options.artifacts + "/\(name)-mutation-\(index).bin"
                let written = FileManager.default.createFile(atPath: path, contents: Data(mutator.input(index, seed: options.seed, salt: salt)))
                print(written ? path : "switchboard-fuzz: cannot write \(path)")
                continue
            }
            let mutations = options.mutationsFor[name] ?? options.mutations
            var failed = false
            for seed in seeds {
                do throws(FuzzFailure) { try target.run(seed.bytes) } catch {
                    report(target: name, input: seed.bytes, label: "corpus/\(seed.name)", error: error, options: options)
                    failed = true
                }
            }
            for index in 0..<mutations {
                let input = mutator.input(index, seed: options.seed, salt: salt)
                do throws(FuzzFailure) { try target.run(input) } catch {
                    report(target: name, input: input, label: "mutation \(index) (seed \(options.seed))", error: error, options: options)
                    failed = true
                    break  // one reproducer per target is enough
                }
            }
            if failed { failures += 1 }
            print("switchboard-fuzz: \(name): \(seeds.count) corpus inputs, \(mutations) mutations, \(failed ? "FAILED" : "ok"); reached: \(FuzzCounters.drain(prefix: name + "."))")
        }
        return failures == 0 ? 0 : 1
    }

    /// Files of `directory` sorted by name (README.md and dotfiles skipped).
    static func corpus(in directory: String) throws -> [(name: String, bytes: [UInt8])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { !$0.hasPrefix(".") && $0 != "README.md" }
            .sorted()
        return try names.map { name in
            (name, [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))))
        }
    }

    /// FNV-1a of the target name: different targets get different mutation streams.
    static func saltFor(_ name: String) -> UInt64 {
        name.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    private static func report(target: String, input: [UInt8], label: String, error: FuzzFailure, options: ReplayOptions) {
        let path = options.artifacts + "/fuzz-failure-\(target)-\(saltFor(label) & 0xFFFF_FFFF).bin"
        let written = FileManager.default.createFile(atPath: path, contents: Data(input))
        print("switchboard-fuzz: \(target): invariant failed on \(label): \(error.message)")
        print("switchboard-fuzz: input (\(input.count) bytes) " + (written ? "written to \(path)" : "not written (\(path) not writable)"))
    }
}
