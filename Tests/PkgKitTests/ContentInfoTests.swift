import Foundation
import Testing
import TestSupport
@testable import PkgKit

@Suite struct ContentInfoTests {
    private func binary(_ object: Any) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
    }

    @Test func xmlPlist() {
        let parsed = ParsedContentInfo(data: Data(XarCrafter.plist(version: "1.2", id: "com.example.x")))
        #expect(parsed.invalidReason == nil)
        #expect(parsed.missingKeys.isEmpty)
        #expect(parsed.unknownKeys.isEmpty)
        #expect(parsed.contentInfo == ContentInfo(contentVersion: "1.2", productIdentifier: "com.example.x"))
    }

    @Test func binaryPlist() throws {
        let data = try binary(["ContentVersion": "2.0", "IAPProductIdentifier": "com.example.y"])
        #expect(data.prefix(6) == Data("bplist".utf8))
        let parsed = ParsedContentInfo(data: data)
        #expect(parsed.invalidReason == nil)
        #expect(parsed.contentInfo == ContentInfo(contentVersion: "2.0", productIdentifier: "com.example.y"))
    }

    @Test(arguments: ["not a plist at all <", "", "<plist><dict><key>a</key></plist>", "\u{0}\u{1}\u{2}bplist"])
    func notAPlist(_ text: String) {
        let parsed = ParsedContentInfo(data: Data(text.utf8))
        #expect(parsed.invalidReason != nil)
        #expect(parsed.contentInfo == nil)
    }

    @Test func arrayTopLevel() throws {
        let parsed = ParsedContentInfo(data: try binary(["ContentVersion", "1.0"]))
        #expect(parsed.invalidReason != nil)
        #expect(parsed.contentInfo == nil)
        let xml = ParsedContentInfo(data: Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><string>1.0</string></plist>".utf8))
        #expect(xml.invalidReason != nil)
    }

    @Test func wrongKeyType() throws {
        let parsed = ParsedContentInfo(data: try binary(["ContentVersion": 1, "IAPProductIdentifier": "com.example.z"]))
        #expect(parsed.invalidReason != nil)
        #expect(parsed.invalidReason?.contains("ContentVersion") == true)
        #expect(parsed.contentVersion == nil)
        #expect(parsed.productIdentifier == "com.example.z")
        #expect(parsed.missingKeys.isEmpty)
        #expect(parsed.contentInfo == nil)
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>
        <key>ContentVersion</key><integer>1</integer><key>IAPProductIdentifier</key><array/></dict></plist>
        """
        let both = ParsedContentInfo(data: Data(xml.utf8))
        #expect(both.invalidReason?.contains("ContentVersion") == true)
        #expect(both.invalidReason?.contains("IAPProductIdentifier") == true)
    }

    @Test func missingKeys() throws {
        let one = ParsedContentInfo(data: try binary(["ContentVersion": "1.0"]))
        #expect(one.missingKeys == ["IAPProductIdentifier"])
        #expect(one.invalidReason == nil)
        #expect(one.contentVersion == "1.0")
        #expect(one.contentInfo == nil)
        let none = ParsedContentInfo(data: try binary([String: String]()))
        #expect(Set(none.missingKeys) == ["ContentVersion", "IAPProductIdentifier"])
        #expect(none.invalidReason == nil)
    }

    @Test func unknownKeys() throws {
        let parsed = ParsedContentInfo(data: try binary(["ContentVersion": "1.0", "IAPProductIdentifier": "a.b", "Zeta": 1, "Alpha": "x"]))
        #expect(parsed.unknownKeys == ["Alpha", "Zeta"])
        #expect(parsed.invalidReason == nil)
        #expect(parsed.contentInfo != nil)
    }

    @Test func xmlDataRoundTrip() throws {
        let info = ContentInfo(contentVersion: "1.0.3", productIdentifier: "com.example.book_2")
        let data = try info.xmlData()
        #expect(String(decoding: data, as: UTF8.self).contains("<?xml"))
        let parsed = ParsedContentInfo(data: data)
        #expect(parsed.invalidReason == nil)
        #expect(parsed.unknownKeys.isEmpty)
        #expect(parsed.contentInfo == info)
    }

    @Test func xmlDataIsByteIdenticalForEqualValues() throws {
        for _ in 0..<5 {
            let a = try ContentInfo(contentVersion: "2.1", productIdentifier: "com.example.a").xmlData()
            let b = try ContentInfo(contentVersion: "2" + ".1", productIdentifier: String("com.example.a")).xmlData()
            #expect(a == b)
        }
        let other = try ContentInfo(contentVersion: "2.2", productIdentifier: "com.example.a").xmlData()
        #expect(other != (try ContentInfo(contentVersion: "2.1", productIdentifier: "com.example.a").xmlData()))
    }
}
