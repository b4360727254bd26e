/// An invariant a fuzz target checks did not hold: a finding, never a rejected input
/// (rejected input is the parsers' typed errors, which targets swallow).
enum FuzzFailure: Error, Equatable {
    case invariant(String)

    var message: String {
        switch self {
        case .invariant(let text): text
        }
    }
}

/// Fails the current input with `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw .invariant(message()) }
}
