import Crypto

/// A xar checksum style that pkgtool verifies itself (`<archived-checksum style=…>`,
/// `<extracted-checksum style=…>`, the header's TOC checksum).
package enum XarChecksumStyle: UInt8, Sendable {
    case none
    case sha1
    case md5

    /// The style a TOC names; nil for one pkgtool leaves to libarchive. No attribute means none.
    package init?(name: String?) {
        // Spelt as xar writers spell them, the names need no Unicode case mapping.
        switch name {
        case nil, "none": self = .none; return
        case "sha1": self = .sha1; return
        case "md5": self = .md5; return
        default: break
        }
        switch name?.lowercased() {
        case nil, "none": self = .none
        case "sha1": self = .sha1
        case "md5": self = .md5
        default: return nil
        }
    }

    /// The style the header's algorithm number names; nil for a named (SHA-2) one.
    package init?(headerAlgorithm: UInt32) {
        switch headerAlgorithm {
        case 0: self = .none
        case 1: self = .sha1
        case 2: self = .md5
        default: return nil
        }
    }

    /// A digest running in this style, or nil for `none`.
    func makeDigest() -> XarDigest? {
        switch self {
        case .none: return nil
        case .sha1: return .sha1(Insecure.SHA1())
        case .md5: return .md5(Insecure.MD5())
        }
    }
}

/// A running digest in one of the styles xar uses.
enum XarDigest {
    case sha1(Insecure.SHA1)
    case md5(Insecure.MD5)

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .sha1(var hasher):
            hasher.update(bufferPointer: bytes)
            self = .sha1(hasher)
        case .md5(var hasher):
            hasher.update(bufferPointer: bytes)
            self = .md5(hasher)
        }
    }

    package func finalize() -> [UInt8] {
        switch self {
        case .sha1(let hasher): return Array(hasher.finalize())
        case .md5(let hasher): return Array(hasher.finalize())
        }
    }
}
