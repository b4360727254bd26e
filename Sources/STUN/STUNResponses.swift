/// Responses an ICE-lite agent sends to Binding requests (RFC 8445 §7.3, RFC 8489 §6.3).
public enum STUNResponses {
    /// Binding success: XOR-MAPPED-ADDRESS of the request's source, MESSAGE-INTEGRITY with
    /// the local ICE password (the key that authenticated the request) and FINGERPRINT
    /// (RFC 8445 §7.3.1.4, RFC 8489 §14.7 — ICE always uses FINGERPRINT).
    public static func bindingSuccess(
        transactionID: STUNTransactionID, mappedAddress: STUNAddress, integrityKey: [UInt8]
    ) throws(STUNError) -> [UInt8] {
        var builder = STUNMessageBuilder(type: .bindingSuccess, transactionID: transactionID)
        try builder.appendXORMappedAddress(mappedAddress)
        return try builder.build(integrityKey: integrityKey, fingerprint: true)
    }

    /// Binding error response with ERROR-CODE. Pass `integrityKey` only when the request
    /// itself authenticated (e.g. 487 Role Conflict, RFC 8445 §7.3.1.1); 400 and 401 are
    /// sent without MESSAGE-INTEGRITY (RFC 8489 §9.1.3).
    public static func bindingError(
        transactionID: STUNTransactionID, code: STUNErrorCode, integrityKey: [UInt8]? = nil
    ) throws(STUNError) -> [UInt8] {
        var builder = STUNMessageBuilder(type: .bindingError, transactionID: transactionID)
        try builder.appendErrorCode(code.rawValue, reason: code.reason)
        return try builder.build(integrityKey: integrityKey, fingerprint: true)
    }
}
