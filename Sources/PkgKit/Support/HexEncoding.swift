/// The digits every hex spelling uses.
private let hexDigits: StaticString = "0123456789abcdef"

extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal, as xar checksums and JSON output use.
    public var hexString: String {
        let bytes = Array(self)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            hexDigits.withUTF8Buffer { digit in
                for (index, byte) in bytes.enumerated() {
                    buffer[2 * index] = digit[Int(byte >> 4)]
                    buffer[2 * index + 1] = digit[Int(byte & 0x0F)]
                }
            }
            return bytes.count * 2
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends `byte` as two lowercase hexadecimal digits.
    package mutating func appendHex(_ byte: UInt8) {
        hexDigits.withUTF8Buffer { digit in
            append(digit[Int(byte >> 4)])
            append(digit[Int(byte & 0x0F)])
        }
    }
}
