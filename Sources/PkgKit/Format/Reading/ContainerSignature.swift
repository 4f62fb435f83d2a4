
/// A container, recognised by its own signature and never by elimination: random bytes are not
/// "tar" (docs/diagnostics.md, `unreadable-archive`).
public enum ContainerSignature: String, Sendable {
    /// `xar!` magic.
    case xar
    /// A zip local file header, or the end record of an empty zip.
    case zip
    /// A 512-byte tar header whose checksum is right.
    case tar
    /// A gzip, bzip2, xz or zstd stream: a compressed tar, perhaps.
    case compressed

    /// How many leading bytes `detect` looks at.
    public static let headBytes = 512

    /// The container that `head` (the first bytes of a file) starts, or nil for none.
    public static func detect(_ head: some Collection<UInt8>) -> ContainerSignature? {
        let bytes = Array(head.prefix(headBytes))
        func starts(_ magic: [UInt8]) -> Bool { bytes.starts(with: magic) }
        if starts(XarHeader.magic) { return .xar }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) || starts([0x50, 0x4B, 0x07, 0x08]) { return .zip }
        if starts([0x1F, 0x8B]) || starts(Array("BZh".utf8)) || starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00])
            || starts([0x28, 0xB5, 0x2F, 0xFD]) { return .compressed }
        if isTarHeader(bytes) { return .tar }
        return nil
    }

    /// True when `block` is a tar header: its checksum field (octal, at 148) equals the sum of
    /// the block's bytes with that field counted as spaces, unsigned or (old writers) signed.
    static func isTarHeader(_ block: [UInt8]) -> Bool {
        guard block.count >= 512, block[0] != 0 else { return false }
        var stored = 0
        var digits = 0
        var ended = false
        for byte in block[148..<156] {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "7") where !ended:
                stored = stored * 8 + Int(byte - UInt8(ascii: "0"))
                digits += 1
            case 0, UInt8(ascii: " "):
                // Blanks before the digits, NUL or blank after them.
                if digits > 0 { ended = true }
            default:
                return false
            }
        }
        guard digits > 0 else { return false }
        var unsigned = 0
        var signed = 0
        for (index, byte) in block[0..<512].enumerated() {
            let value = (148..<156).contains(index) ? UInt8(ascii: " ") : byte
            unsigned += Int(value)
            signed += Int(Int8(bitPattern: value))
        }
        return stored == unsigned || stored == signed
    }
}
