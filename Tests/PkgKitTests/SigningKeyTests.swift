import Foundation
import Testing
import TestSupport
@testable import PkgKit

private func openssl(_ arguments: [String], input: Data? = nil) throws -> (status: Int32, output: Data) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, data)
}

private let hasOpenSSL = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")

/// Ed25519 keys and catalog signatures, and their interoperability with openssl both ways.
@Suite struct SigningKeyTests {
    let folder: Scratch

    init() throws {
        folder = try Scratch()
    }
    let catalog = Data("{\"format\": \"pkgtool-catalog\"}\n".utf8)

    @Test func pemRoundTripsInOpenSSLsLayout() throws {
        let key = CatalogSigningKey()
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(pem.hasSuffix("-----END PRIVATE KEY-----\n"))
        #expect(pem.split(separator: "\n").count == 3)
        #expect(try CatalogSigningKey(pem: pem) == key)
        let pub = key.publicKey.pemRepresentation
        #expect(pub.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        #expect(try CatalogVerifyingKey(pem: pub) == key.publicKey)
        // The DER is RFC 8410's: fixed 16- and 12-byte prefixes before the key bytes.
        let der = Data(base64Encoded: String(pem.split(separator: "\n")[1]))!
        #expect(Array(der.prefix(16)) == [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20])
        let pubDER = Data(base64Encoded: String(pub.split(separator: "\n")[1]))!
        #expect(Array(pubDER.prefix(12)) == [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00])
    }

    @Test func signsAndVerifies() throws {
        let key = CatalogSigningKey()
        let file = key.signatureFile(for: catalog)
        #expect(file.last == 0x0A)
        #expect(file.filter { $0 == 0x0A }.count == 1)
        try key.publicKey.verify(catalog: catalog, signatureFile: file)
        try key.publicKey.verify(catalog: catalog, signatureFile: file.dropLast())          // no newline
        try key.publicKey.verify(catalog: catalog, signatureFile: file.dropLast() + Data("\r\n".utf8))
    }

    @Test func refusesWrongKeysTamperedBytesAndBadFiles() throws {
        let key = CatalogSigningKey(), other = CatalogSigningKey()
        let file = key.signatureFile(for: catalog)
        #expect(throws: SignatureError.self) { try other.publicKey.verify(catalog: catalog, signatureFile: file) }
        var tampered = catalog
        tampered[3] ^= 1
        #expect(throws: SignatureError.self) { try key.publicKey.verify(catalog: tampered, signatureFile: file) }
        #expect(throws: SignatureError.self) { try key.publicKey.verify(catalog: catalog + Data("\n".utf8), signatureFile: file) }
        #expect(throws: SignatureError.self) { try key.publicKey.verify(catalog: catalog, signatureFile: nil) }
        #expect(throws: SignatureError.self) { try key.publicKey.verify(catalog: catalog, signatureFile: Data("not base64!\n".utf8)) }
        #expect(throws: SignatureError.self) { try key.publicKey.verify(catalog: catalog, signatureFile: Data("AAAA\n".utf8)) }
        #expect(throws: SignatureError.self) { try key.publicKey.verify(catalog: catalog, signatureFile: Data()) }
        #expect(throws: SignatureError.self) { try key.publicKey.verify(catalog: catalog, signatureFile: file.dropLast() + file) }
        let huge = Data(repeating: 0x0A, count: CatalogSignature.maximumBytes) + file
        #expect(throws: SignatureError.self) { try key.publicKey.verify(catalog: catalog, signatureFile: huge) }
        do {
            try key.publicKey.verify(catalog: catalog, signatureFile: nil)
        } catch {
            #expect(error.diagnostic.code == .badSignature)
            #expect(error.diagnostic.path == "signatures/\(sha256Hex(catalog)).sig")
            #expect(error.disposition == .refused)
        }
    }

    /// One line per key: any line verifying with any trusted key is enough, whatever the order,
    /// and lines that are no signature are passed over.
    @Test func anyLineWithAnyTrustedKeyVerifies() throws {
        let old = CatalogSigningKey(), new = CatalogSigningKey(), stranger = CatalogSigningKey()
        let file = CatalogSignature.fileContents(signing: catalog, with: [old, new])
        #expect(file == old.signatureFile(for: catalog) + new.signatureFile(for: catalog))
        #expect(String(decoding: file, as: UTF8.self).split(separator: "\n").count == 2)
        #expect(file == CatalogSignature.fileContents(signing: catalog, with: [old, new]), "Ed25519 is deterministic")
        let path = CatalogSignature.relativePath(for: catalog)
        for trusted in [[old], [new], [stranger, new], [new, old]] {
            try CatalogSignature.verify(catalog, signatureFile: file, trustedKeys: trusted.map(\.publicKey), path: path)
        }
        #expect(throws: SignatureError.self) {
            try CatalogSignature.verify(catalog, signatureFile: file, trustedKeys: [stranger.publicKey], path: path)
        }
        // Another catalog's file, even signed by the trusted key, does not verify these bytes.
        let otherCatalog = CatalogSignature.fileContents(signing: catalog + Data(" ".utf8), with: [old, new])
        #expect(throws: SignatureError.self) {
            try CatalogSignature.verify(catalog, signatureFile: otherCatalog, trustedKeys: [old.publicKey, new.publicKey], path: path)
        }
        let untidy = Data("\r\nnot base64!\nAAAA\n".utf8) + new.signatureFile(for: catalog).dropLast() + Data("  \r\n\n".utf8)
        #expect(try CatalogSignature.signatures(fromFile: untidy, path: path) == [new.signature(for: catalog)])
        try CatalogSignature.verify(catalog, signatureFile: untidy, trustedKeys: [new.publicKey], path: path)
        do {
            try CatalogSignature.verify(catalog, signatureFile: file, trustedKeys: [stranger.publicKey, CatalogSigningKey().publicKey], path: path)
        } catch {
            #expect(error.reason.contains("none of its 2 signatures verifies with any of the 2 trusted keys"), "\(error.reason)")
        }
    }

    @Test func refusesGarbageAndOtherKeyKinds() throws {
        #expect(throws: KeyError.self) { try CatalogSigningKey(pem: "hello") }
        #expect(throws: KeyError.self) { try CatalogSigningKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
        #expect(throws: KeyError.self) { try CatalogVerifyingKey(pem: "") }
        let key = CatalogSigningKey()
        // A public key where a private one is expected, and the reverse, say so.
        do {
            _ = try CatalogSigningKey(pem: key.publicKey.pemRepresentation)
            Issue.record("accepted a public key as private")
        } catch {
            #expect(error.reason.contains("public key"))
        }
        #expect(throws: KeyError.self) { try CatalogVerifyingKey(pem: key.pemRepresentation) }
    }

    /// A file given where a public key belongs says what it holds and what to give instead.
    @Test func aWrongTrustFileSaysWhatItHolds() throws {
        let key = CatalogSigningKey()
        let certificate = "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n"
        for (pem, holds) in [(key.pemRepresentation, "holds a private key"), (certificate, "holds a certificate"),
                             (key.publicKey.pemRepresentation + certificate, "holds 2 PEM blocks ('PUBLIC KEY', 'CERTIFICATE')"),
                             ("hello", "not a PEM file")] {
            do {
                _ = try CatalogVerifyingKey(pem: pem)
                Issue.record("accepted \(holds)")
            } catch {
                #expect(error.reason.contains(holds) && error.reason.contains("NAME.pub.pem"), "\(error.reason)")
                #expect(error.diagnostic.code == .unreadableInput)
            }
        }
    }

    /// Trust is said, never implied by an empty list of keys.
    @Test func trustIsExplicit() {
        let key = CatalogSigningKey().publicKey, other = CatalogSigningKey().publicKey
        #expect(CatalogTrust.signed(byAnyOf: []) == nil)
        #expect(CatalogTrust.signed(byAnyOf: [key, other]) == .signed(by: key, other))
        #expect(CatalogTrust.signed(by: key).keys == [key] && !CatalogTrust.signed(by: key).isUnsigned)
        #expect(CatalogTrust.unsigned.isUnsigned && CatalogTrust.unsigned.keys.isEmpty)
    }

    /// A key file error reads `path: reason`, as its documentation says (issue 22: it read
    /// `path reason`), and its diagnostic names the file once.
    @Test func keyFileErrorsReadPathColonReason() throws {
        let files = SigningKeyFiles(name: folder.path("k"))
        try folder.write("k.pub.pem", Data(CatalogSigningKey().publicKey.pemRepresentation.utf8))
        do {
            _ = try files.generate()
            Issue.record("a public key without its private key was accepted")
        } catch {
            #expect("\(error)" == "\(files.publicKeyPath): \(error.reason)")
            #expect(error.diagnostic.path == files.publicKeyPath)
            #expect(!error.reason.contains(files.publicKeyPath))
        }
    }

    @Test(.enabled(if: hasOpenSSL)) func refusesAnRSAKeyByName() throws {
        let path = folder.path("rsa.pem")
        #expect(try openssl(["genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:1024", "-out", path]).status == 0)
        let pem = try String(contentsOfFile: path, encoding: .utf8)
        do {
            _ = try CatalogSigningKey(pem: pem)
            Issue.record("accepted an RSA key")
        } catch {
            #expect(error.reason.contains("RSA"))
        }
    }

    @Test(.enabled(if: hasOpenSSL)) func anOpenSSLKeySignsForPkgKit() throws {
        let keyPath = folder.path("k.pem"), pubPath = folder.path("k.pub.pem"), dataPath = try folder.write("catalog.json", catalog)
        #expect(try openssl(["genpkey", "-algorithm", "ed25519", "-out", keyPath]).status == 0)
        #expect(try openssl(["pkey", "-in", keyPath, "-pubout", "-out", pubPath]).status == 0)
        let keyPEM = try String(contentsOfFile: keyPath, encoding: .utf8)
        let pubPEM = try String(contentsOfFile: pubPath, encoding: .utf8)
        // pkgtool reads openssl's files and writes them back byte for byte.
        let key = try CatalogSigningKey(pem: keyPEM)
        #expect(key.pemRepresentation == keyPEM)
        #expect(key.publicKey.pemRepresentation == pubPEM)
        let signed = try openssl(["pkeyutl", "-sign", "-inkey", keyPath, "-rawin", "-in", dataPath])
        #expect(signed.status == 0 && signed.output.count == 64)
        let file = CatalogSignature.fileContents(for: [signed.output])
        try CatalogVerifyingKey(pem: pubPEM).verify(catalog: catalog, signatureFile: file)
        // openssl's line beside pkgtool's (a rotation signed by two tools) verifies too.
        let mixed = CatalogSigningKey().signatureFile(for: catalog) + file
        try CatalogVerifyingKey(pem: pubPEM).verify(catalog: catalog, signatureFile: mixed)
    }

    @Test(.enabled(if: hasOpenSSL)) func aPkgKitSignatureVerifiesWithOpenSSL() throws {
        let key = CatalogSigningKey()
        let pubPath = try folder.write("k.pub.pem", Data(key.publicKey.pemRepresentation.utf8))
        let keyPath = try folder.write("k.pem", Data(key.pemRepresentation.utf8))
        let dataPath = try folder.write("catalog.json", catalog)
        let file = key.signatureFile(for: catalog)
        let signature = try #require(try CatalogSignature.signatures(fromFile: file, path: "k.sig").first)
        let sigPath = try folder.write("signature.bin", signature)
        #expect(try openssl(["pkeyutl", "-verify", "-pubin", "-inkey", pubPath, "-rawin", "-in", dataPath, "-sigfile", sigPath]).status == 0)
        // openssl reads the private key too, and derives the same public key.
        let derived = try openssl(["pkey", "-in", keyPath, "-pubout"])
        #expect(String(decoding: derived.output, as: UTF8.self) == key.publicKey.pemRepresentation)
        // And refuses a tampered catalog.
        let tamperedPath = try folder.write("tampered.json", catalog + Data(" ".utf8))
        #expect(try openssl(["pkeyutl", "-verify", "-pubin", "-inkey", pubPath, "-rawin", "-in", tamperedPath, "-sigfile", sigPath]).status != 0)
    }
}
