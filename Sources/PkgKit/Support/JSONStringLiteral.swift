/// `text` as a JSON string literal: quotes, backslashes and control characters escaped,
/// everything else (including `/` and non-ASCII) written as it is. For the files pkgtool writes
/// byte for byte (the catalog, asset pack manifests), whose key order and layout are fixed.
package func jsonStringLiteral(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
