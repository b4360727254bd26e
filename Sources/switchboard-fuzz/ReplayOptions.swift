/// Command line of replay mode (no argument parser package: house rule).
///
/// `switchboard-fuzz [--corpus DIR] [--mutations N] [--mutations-for T=N] [--seed S] [--artifacts DIR] [--dump I] [target…]`
struct ReplayOptions: Equatable {
    /// Root holding one directory per target (`Tests/Fuzz/Corpus`).
    var corpusRoot = "Tests/Fuzz/Corpus"
    /// Mutated inputs per target after the corpus itself; 20 000 keeps the XCTest under a minute.
    var mutations = 20_000
    /// Per-target overrides (`--mutations-for sdp=1000`): debug builds parse SDP ~100× slower
    /// than RTP, and the XCTest must stay under a minute.
    var mutationsFor: [String: Int] = [:]
    var seed: UInt64 = 0x5357_4254_4348_4655  // "SWBTCHFU": any fixed value; failures must reproduce
    /// Where failing inputs are written.
    var artifacts = "."
    /// Write mutation I of the (single) target to stdout-named file and exit (reproduction).
    var dump: Int?
    var targets: [String] = []

    enum ParseError: Error, Equatable {
        case missingValue(String)
        case badNumber(String)
        case unknownTarget(String)
        case unknownFlag(String)
    }

    init() {}

    init(arguments: [String]) throws(ParseError) {
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws(ParseError) -> String {
            guard let next = iterator.next() else { throw .missingValue(flag) }
            return next
        }
        while let argument = iterator.next() {
            switch argument {
            case "--corpus": corpusRoot = try value(argument)
            case "--artifacts": artifacts = try value(argument)
            case "--mutations":
                let text = try value(argument)
                guard let number = Int(text), number >= 0 else { throw .badNumber(text) }
                mutations = number
            case "--mutations-for":
                let text = try value(argument)
                let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, FuzzTarget.named(parts[0]) != nil else { throw .unknownTarget(text) }
                guard let number = Int(parts[1]), number >= 0 else { throw .badNumber(text) }
                mutationsFor[parts[0]] = number
            case "--seed":
                let text = try value(argument)
                guard let number = UInt64(text) else { throw .badNumber(text) }
                seed = number
            case "--dump":
                let text = try value(argument)
                guard let number = Int(text), number >= 0 else { throw .badNumber(text) }
                dump = number
            case "all": targets += FuzzTarget.all.map(\.name)
            default:
                if argument.hasPrefix("-") { throw .unknownFlag(argument) }
                guard FuzzTarget.named(argument) != nil else { throw .unknownTarget(argument) }
                targets.append(argument)
            }
        }
        if targets.isEmpty { targets = FuzzTarget.all.map(\.name) }
    }
}
