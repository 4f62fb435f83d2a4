import Testing
@testable import PkgKit

@Suite struct ContentVersionTests {
    @Test(arguments: ["1", "1.0", "2.13.4", "0", "0.0.0", "2147483647.0.1"])
    func validVersionsParse(_ text: String) {
        let version = ContentVersion(text)
        #expect(version != nil)
        #expect(version?.description == text)
        #expect(ContentVersion.problem(with: text) == nil)
    }

    @Test(arguments: ["01", "1.", ".1", "1..2", "1.2.3.4", "2147483648", "-1", "a", "", "1.02", " 1", "1.0 ", "+1", "1.a", "١", "99999999999"])
    func invalidVersionsAreRejected(_ text: String) {
        #expect(ContentVersion(text) == nil)
        #expect(ContentVersion.problem(with: text) != nil)
    }

    @Test func componentsAreNumeric() {
        #expect(ContentVersion("2.13.4")?.components == [2, 13, 4])
        #expect(ContentVersion("2147483647")?.components == [Int32.max])
    }

    @Test func ordering() throws {
        let v1 = try #require(ContentVersion("1.0"))
        let v100 = try #require(ContentVersion("1.0.0"))
        let v101 = try #require(ContentVersion("1.0.1"))
        let v110 = try #require(ContentVersion("1.10"))
        let v19 = try #require(ContentVersion("1.9"))
        let one = try #require(ContentVersion("1"))
        #expect(v1 == v100)
        #expect(one == v1)
        #expect(v1.hashValue == v100.hashValue)
        #expect(v100 < v101)
        #expect(v101 < v110)
        #expect(v19 < v110)
        #expect(!(v1 < v100))
        #expect(!(v100 < v1))
        #expect([v110, v101, v1].sorted() == [v1, v101, v110])
        #expect(Set([v1, v100, one]).count == 1)
    }

    @Test func bump() throws {
        let version = try #require(ContentVersion("1.2"))
        #expect(version.bumped(.major)?.description == "2.0")
        #expect(version.bumped(.minor)?.description == "1.3")
        #expect(version.bumped(.patch)?.description == "1.2.1")
        let full = try #require(ContentVersion("1.2.3"))
        #expect(full.bumped(.major)?.description == "2.0")
        #expect(full.bumped(.minor)?.description == "1.3")
        #expect(full.bumped(.patch)?.description == "1.2.4")
        for part in ContentVersion.Part.allCases {
            let bumped = try #require(version.bumped(part))
            #expect(bumped > version)
            #expect(ContentVersion(bumped.description) == bumped)
        }
    }

    @Test func bumpOverflowIsNil() throws {
        #expect(try #require(ContentVersion("2147483647")).bumped(.major) == nil)
        #expect(try #require(ContentVersion("1.2147483647")).bumped(.minor) == nil)
        #expect(try #require(ContentVersion("1.2.2147483647")).bumped(.patch) == nil)
        #expect(try #require(ContentVersion("2147483647.5")).bumped(.minor)?.description == "2147483647.6")
    }
}
