import Foundation
internal import CXML2

/// Whether bytes are well-formed XML, decided by libxml2 with the network and DTD loading off.
package enum XMLWellFormedness {
    package static func isWellFormed(_ data: Data) -> Bool {
        LibXMLSetup.ensure()
        guard data.count <= Int(Int32.max) else { return false }
        return data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return false }
            let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
            guard let document = xmlReadMemory(base.assumingMemoryBound(to: CChar.self), Int32(raw.count), nil, nil, options) else {
                return false
            }
            xmlFreeDoc(document)
            return true
        }
    }
}
