import Crypto
import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// create copies stored files into the package without reading them itself; the thread that
/// hashes the package as it is written checks each copy against the sha1 of the first pass.
@Suite struct BackgroundHasherTests {
    /// Writes `parts` through a hasher, asking for `checks` (part index → digest to expect).
    static func write(_ parts: [[UInt8]], checks: [Int: Insecure.SHA1Digest]) throws -> String {
        let dir = try Scratch()
        let output = try FileOutput.anonymous(in: dir.root)
        let hasher = BackgroundHasher(descriptor: output.descriptor, path: dir.root)
        for (index, part) in parts.enumerated() {
            if let digest = checks[index] {
                hasher.expect(sha1: digest, start: output.position, count: Int64(part.count), failure: WriteError.sourceChanged(path: "part \(index)"))
            }
            try output.write(part)
            hasher.advance(to: output.position)
        }
        return try hasher.finish()
    }

    @Test func storedCopiesAreCheckedWhileHashing() throws {
        let parts = [Array(repeating: UInt8(1), count: 3_000_000), Array("between".utf8),
                     (0..<2_500_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }, Array("end".utf8)]
        let sha256 = SHA256.hash(data: Data(parts.joined())).hexString
        let right = [0: Insecure.SHA1.hash(data: Data(parts[0])), 2: Insecure.SHA1.hash(data: Data(parts[2]))]
        #expect(try Self.write(parts, checks: right) == sha256)
        // A copy that is not what was hashed in the first pass (the source changed) fails.
        let wrong = [0: Insecure.SHA1.hash(data: Data(parts[0])), 2: Insecure.SHA1.hash(data: Data(parts[1]))]
        #expect(throws: WriteError.self) { try Self.write(parts, checks: wrong) }
    }
}
