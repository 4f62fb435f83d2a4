extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal, as xar checksums and JSON output use.
    public var hexString: String {
        let bytes = Array(self)
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            digits.withUTF8Buffer { digit in
                for (index, byte) in bytes.enumerated() {
                    buffer[2 * index] = digit[Int(byte >> 4)]
                    buffer[2 * index + 1] = digit[Int(byte & 0x0F)]
                }
            }
            return bytes.count * 2
        }
    }
}
