import CSRTP
import CSRTPCrypto
import Foundation
import XCTest
@testable import SRTP

/// Known-answer tests of the OpenSSL-backed libsrtp2 types (`CSRTPCrypto`), driven through
/// libsrtp2's own cipher/auth calls with RFC vectors, independent of the self-test data the types
/// carry. Wire compatibility of whole packets is in `SRTPKnownAnswerTests` and
/// `SRTPLongPacketVectorTests`.
final class SRTPCryptoTypeTests: XCTestCase {
    static func hex(_ string: String) -> [UInt8] {
        let digits = Array(string.filter { !$0.isWhitespace }.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map { i in
            UInt8(String(decoding: digits[i...i + 1], as: UTF8.self), radix: 16) ?? 0
        }
    }

    private func withCipher(
        _ type: srtp_cipher_type_t, key: [UInt8], tagLength: Int32 = 0,
        _ body: (UnsafeMutablePointer<srtp_cipher_t>) throws -> Void
    ) throws {
        var type = type
        var cipher: UnsafeMutablePointer<srtp_cipher_t>?
        XCTAssertEqual(srtp_cipher_type_alloc(&type, &cipher, Int32(key.count), tagLength), srtp_err_status_ok)
        let c = try XCTUnwrap(cipher)
        defer { _ = srtp_cipher_dealloc(c) }
        XCTAssertEqual(key.withUnsafeBufferPointer { srtp_cipher_init(c, $0.baseAddress) }, srtp_err_status_ok)
        try body(c)
    }

    private func setIV(_ c: UnsafeMutablePointer<srtp_cipher_t>, _ iv: [UInt8], _ direction: srtp_cipher_direction_t) {
        var iv = iv
        XCTAssertEqual(srtp_cipher_set_iv(c, &iv, Int32(direction.rawValue)), srtp_err_status_ok)
    }

    func testInitialisationInstallsTheOpenSSLTypes() throws {
        try SRTPLibrary.ensureInitialized()
        if ProcessInfo.processInfo.environment[SRTPLibrary.builtinCryptoEnvironmentKey] == "1" {
            XCTAssertFalse(SRTPLibrary.usesOpenSSLCrypto)
        } else {
            XCTAssertTrue(SRTPLibrary.usesOpenSSLCrypto, "sb_srtp_crypto_install failed or was skipped")
        }
    }

    /// libsrtp2's self-test runs each type's own vectors (RFC 3711 B.2, RFC 7714 §16.1.1,
    /// RFC 2202) plus a random encrypt/decrypt round trip; replacement also ran the NSS types' vectors.
    func testLibsrtpSelfTestsPass() {
        var icm = sb_srtp_aes_icm_128_openssl, gcm = sb_srtp_aes_gcm_128_openssl, hmac = sb_srtp_hmac_sha1_openssl
        XCTAssertEqual(srtp_cipher_type_self_test(&icm), srtp_err_status_ok)
        XCTAssertEqual(srtp_cipher_type_self_test(&gcm), srtp_err_status_ok)
        XCTAssertEqual(srtp_auth_type_self_test(&hmac), srtp_err_status_ok)
    }

    /// The self-test harness the replacement relies on rejects a wrong answer (so the vectors we
    /// ship are really compared): the RFC 3711 B.2 case with one ciphertext bit flipped.
    func testSelfTestHarnessRejectsAWrongVector() {
        var icm = sb_srtp_aes_icm_128_openssl
        let key = Self.hex("2B7E151628AED2A6ABF7158809CF4F3C F0F1F2F3F4F5F6F7F8F9FAFBFCFD")
        var iv = [UInt8](repeating: 0, count: 16)
        let plain = [UInt8](repeating: 0, count: 16)
        var wrong = Self.hex("E03EAD0935C95E80E166B16DD92B4EB4")
        wrong[15] ^= 1
        let status = key.withUnsafeBufferPointer { k in
            plain.withUnsafeBufferPointer { p in
                wrong.withUnsafeBufferPointer { w in
                    iv.withUnsafeMutableBufferPointer { v in
                        var testCase = srtp_cipher_test_case_t(
                            key_length_octets: 30, key: k.baseAddress, idx: v.baseAddress,
                            plaintext_length_octets: 16, plaintext: p.baseAddress,
                            ciphertext_length_octets: 16, ciphertext: w.baseAddress,
                            aad_length_octets: 0, aad: nil, tag_length_octets: 0, next_test_case: nil)
                        return srtp_cipher_type_test(&icm, &testCase)
                    }
                }
            }
        }
        XCTAssertEqual(status, srtp_err_status_algo_fail)
    }

    /// RFC 3711 appendix B.2: AES-CM keystream for session key 2B7E1516..., salt F0F1...FCFD,
    /// index 0 — three blocks, so the counter increment is checked too.
    func testAESICMKeystreamMatchesRFC3711AppendixB2() throws {
        let key = Self.hex("2B7E151628AED2A6ABF7158809CF4F3C F0F1F2F3F4F5F6F7F8F9FAFBFCFD")
        try withCipher(sb_srtp_aes_icm_128_openssl, key: key) { c in
            setIV(c, [UInt8](repeating: 0, count: 16), srtp_direction_encrypt)
            var buffer = [UInt8](repeating: 0, count: 48)
            var length = UInt32(buffer.count)
            XCTAssertEqual(srtp_cipher_encrypt(c, &buffer, &length), srtp_err_status_ok)
            XCTAssertEqual(buffer, Self.hex("""
                E03EAD0935C95E80E166B16DD92B4EB4 D23513162B02D0F72A43A2FE4A5F97AB
                41E95B3BB0A2E8DD477901E4FCA894C0
                """))
            // Decryption is the same keystream: back to zeros.
            setIV(c, [UInt8](repeating: 0, count: 16), srtp_direction_decrypt)
            XCTAssertEqual(srtp_cipher_decrypt(c, &buffer, &length), srtp_err_status_ok)
            XCTAssertEqual(buffer, [UInt8](repeating: 0, count: 48))
        }
    }

    /// RFC 3711 appendix B.3: the key derivation (AES-CM PRF, §4.3.3) libsrtp2 runs on our
    /// AES-ICM type: label in octet 7 of the IV, master salt as the counter offset.
    func testAESICMKeyDerivationMatchesRFC3711AppendixB3() throws {
        let master = Self.hex("E1F97A0D3E018BE0D64FA32C06DE4139 0EC675AD498AFEEBB6960B3AABE6")
        func derive(_ c: UnsafeMutablePointer<srtp_cipher_t>, label: UInt8, count: Int) -> [UInt8] {
            var iv = [UInt8](repeating: 0, count: 16)
            iv[7] = label
            setIV(c, iv, srtp_direction_encrypt)
            var out = [UInt8](repeating: 0, count: count)
            var length = UInt32(count)
            XCTAssertEqual(srtp_cipher_encrypt(c, &out, &length), srtp_err_status_ok)
            return out
        }
        try withCipher(sb_srtp_aes_icm_128_openssl, key: master) { c in
            XCTAssertEqual(derive(c, label: 0, count: 16), Self.hex("C61E7A93744F39EE10734AFE3FF7A087"))
            XCTAssertEqual(derive(c, label: 2, count: 14), Self.hex("30CBBC08863D8C85D49DB34A9AE1"))
            XCTAssertEqual(derive(c, label: 1, count: 94), Self.hex("""
                CEBE321F6FF7716B6FD4AB49AF256A156D38BAA48F0A0ACF3C34E2359E6CDBCE
                E049646C43D9327AD175578EF72270986371C10C9A369AC2F94A8C5FBCDDDC25
                6D6E919A48B610EF17C2041E474035766B68642C59BBFC2F34DB60DBDFB2
                """))
        }
    }

    /// RFC 7714 §16.1.1 (session key and salt given directly; IV per §8.1): encrypt + tag,
    /// decrypt, and a flipped tag bit must fail authentication.
    func testAESGCMMatchesRFC7714Section16_1_1() throws {
        let key = Self.hex("000102030405060708090a0b0c0d0e0f 517569642070726f2071756f")
        let iv = Self.hex("51753c6580c2726f20718414")
        let aad = Self.hex("8040f17b8041f8d35501a0b2")
        let plain = Self.hex("""
            47616c6c 69612065 7374206f 6d6e6973 20646976 69736120 696e2070 61727465 73207472 6573
            """)
        let expected = Self.hex("""
            f24de3a3 fb34de6c acba861c 9d7e4bca be633bd5 0d294e6f 42a5f47a 51c7d19b 36de3adf 8833
            899d7f27 beb16a91 52cf765e e4390cce
            """)
        try withCipher(sb_srtp_aes_gcm_128_openssl, key: key, tagLength: 16) { c in
            var buffer = plain + [UInt8](repeating: 0, count: 16)
            setIV(c, iv, srtp_direction_encrypt)
            XCTAssertEqual(srtp_cipher_set_aad(c, aad, UInt32(aad.count)), srtp_err_status_ok)
            var length = UInt32(plain.count)
            XCTAssertEqual(srtp_cipher_encrypt(c, &buffer, &length), srtp_err_status_ok)
            var tagLength: UInt32 = 0
            let tagStatus = buffer.withUnsafeMutableBufferPointer { srtp_cipher_get_tag(c, $0.baseAddress! + plain.count, &tagLength) }
            XCTAssertEqual(tagStatus, srtp_err_status_ok)
            XCTAssertEqual(tagLength, 16)
            XCTAssertEqual(buffer, expected)

            setIV(c, iv, srtp_direction_decrypt)
            XCTAssertEqual(srtp_cipher_set_aad(c, aad, UInt32(aad.count)), srtp_err_status_ok)
            length = UInt32(buffer.count)
            XCTAssertEqual(srtp_cipher_decrypt(c, &buffer, &length), srtp_err_status_ok)
            XCTAssertEqual(Array(buffer[0..<Int(length)]), plain)

            var tampered = expected
            tampered[tampered.count - 1] ^= 0x01
            setIV(c, iv, srtp_direction_decrypt)
            XCTAssertEqual(srtp_cipher_set_aad(c, aad, UInt32(aad.count)), srtp_err_status_ok)
            length = UInt32(tampered.count)
            XCTAssertEqual(srtp_cipher_decrypt(c, &tampered, &length), srtp_err_status_auth_fail)

            // Tampered AAD (the RTP header) fails too.
            var intact = expected
            var badAAD = aad
            badAAD[1] ^= 0x80
            setIV(c, iv, srtp_direction_decrypt)
            XCTAssertEqual(srtp_cipher_set_aad(c, badAAD, UInt32(badAAD.count)), srtp_err_status_ok)
            length = UInt32(intact.count)
            XCTAssertEqual(srtp_cipher_decrypt(c, &intact, &length), srtp_err_status_auth_fail)
        }
    }

    /// RFC 2202 §3 HMAC-SHA-1 cases 1, 2, 3, 5 (96-bit tag) and 6 (80-byte key, hashed first),
    /// fed as start + update + compute the way libsrtp2 authenticates a packet and its ROC.
    func testHMACSHA1MatchesRFC2202() throws {
        let cases: [(key: [UInt8], data: [UInt8], tag: String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8), "b617318655057264e28bc0b6fb378c8ef146be00"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
            ([UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8), "4c1a03424b55e07fe7f27be1"),
            ([UInt8](repeating: 0xaa, count: 80), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
        ]
        let type = sb_srtp_hmac_sha1_openssl
        let (alloc, dealloc, initialise) = (try XCTUnwrap(type.alloc), try XCTUnwrap(type.dealloc), try XCTUnwrap(type.`init`))
        let (start, update, compute) = (try XCTUnwrap(type.start), try XCTUnwrap(type.update), try XCTUnwrap(type.compute))
        for (key, data, tagHex) in cases {
            let expected = Self.hex(tagHex)
            var auth: UnsafeMutablePointer<srtp_auth_t>?
            XCTAssertEqual(alloc(&auth, Int32(key.count), Int32(expected.count)), srtp_err_status_ok)
            let a = try XCTUnwrap(auth)
            defer { _ = dealloc(a) }
            XCTAssertEqual(initialise(a.pointee.state, key, Int32(key.count)), srtp_err_status_ok)
            // Twice with the same key state: the per-packet restart must not carry data over.
            for _ in 0..<2 {
                XCTAssertEqual(start(a.pointee.state), srtp_err_status_ok)
                let split = data.count / 3
                XCTAssertEqual(update(a.pointee.state, data, Int32(split)), srtp_err_status_ok)
                var tag = [UInt8](repeating: 0, count: expected.count)
                let rest = Array(data[split...])
                XCTAssertEqual(compute(a.pointee.state, rest, Int32(rest.count), Int32(expected.count), &tag), srtp_err_status_ok)
                XCTAssertEqual(tag, expected, "RFC 2202 key length \(key.count)")
            }
        }
    }
}
