import Foundation
import Testing

@Suite struct HostileInputTests {
    static let injection = "'; DROP TABLE clients; --"

    /// SQL-looking text in every free-text field is stored and shown back verbatim.
    @Test func sqlLookingTextIsStoredAndShownVerbatim() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["init", "--empty"]).status == 0)
        let file = cli.folder.appendingPathComponent("evil.csv")
        let evil = Self.injection
        try """
            external_id,name,address,city,state,lat,lon,description,phone,website
            "\(evil)","Clinic \(evil)","1 Main St \(evil)",Los Angeles,CA,34.05,-118.25,"\(evil)","\(evil)","\(evil)"
            """.write(to: file, atomically: true, encoding: .utf8)
        let imported = try cli.run(["admin", "import-clinics", file.path, "--demo", "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let clinics = try #require(try cli.run(["clinics", "list", "--json"]).json() as? [[String: Any]])
        #expect(clinics.first?["name"] as? String == "Clinic \(evil)")
        #expect(clinics.first?["address"] as? String == "1 Main St \(evil)")
        let id = try #require(clinics.first?["id"] as? Int)
        let shown = try #require(try cli.run(["clinics", "show", String(id), "--json"]).json() as? [String: Any])
        #expect(shown["externalId"] as? String == evil && shown["description"] as? String == evil)
        #expect(shown["phone"] as? String == evil && shown["website"] as? String == evil)

        let registered = try cli.run(["register", "--login", "bobby", "--name", "Bobby", "--surname", "Tables", "--street", "Main \(evil)",
                                      "--house", "1", "--city", "Los Angeles", "--accept-privacy", "--password-stdin", "--json"],
                                     input: "correct-horse-42\n")
        #expect((registered.json() as? [String: Any])?["street"] as? String == "Main \(evil)", "\(registered.stderr)")
        #expect(try cli.run(["login", "--login", "bobby", "--password-stdin"], input: "correct-horse-42\n").status == 0)
        let department = try #require((shown["departments"] as? [[String: Any]])?.first?["id"] as? Int)
        let booked = try cli.run(["book", "--department", String(department), "--at", "\(nextMonday()) 09:20", "--notes", evil, "--json"])
        #expect((booked.json() as? [String: Any])?["notes"] as? String == evil, "\(booked.stderr)")
        let failed = try cli.run(["geocode", evil, "--json"])
        #expect(failed.errorCode == "geocode_failed" && failed.stderr.contains("DROP TABLE clients"))
        let check = try #require(try cli.run(["admin", "check", "--json"]).json() as? [String: Any])
        #expect(check["ok"] as? Bool == true)
    }

    /// The raw HIFLD file format: BOM, quoted commas, CLOSED rows skipped, missing values,
    /// a control character inside a name.
    @Test func theHifldFormatImports() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["init", "--empty"]).status == 0)
        let file = cli.folder.appendingPathComponent("hifld.csv")
        var data = Data([0xEF, 0xBB, 0xBF])
        data += Data("""
            FID,ID,NAME,ADDRESS,CITY,STATE,ZIP,TELEPHONE,TYPE,STATUS,LATITUDE,LONGITUDE,WEBSITE,BEDS
            "1","0005793230",CENTRAL VALLEY GENERAL HOSPITAL,1025 NORTH DOUTY STREET,HANFORD,CA,"93230",NOT AVAILABLE,GENERAL ACUTE CARE,CLOSED,36.33,-119.64,NOT AVAILABLE,49
            "2","0053391362",LOS ROBLES HOSPITAL,"393 S, TUSTIN STREET",WESTLAKE VILAGE,CA,"91362",NOT AVAILABLE,CHILDREN,OPEN,34.15,-118.81,http://x.example,-999
            "3","0003766701",MERCY HOSPITAL\u{1E}FORT SCOTT,401 WOODLAND HILLS BLVD,FORT SCOTT,KS,66701,(620) 223-2200,GENERAL ACUTE CARE,OPEN,37.80,-94.70,http://www.mercykansas.com\u{200E},61

            """.utf8)
        try data.write(to: file)
        let result = try #require(try cli.run(["admin", "import-clinics", file.path, "--format", "hifld", "--json"]).json() as? [String: Any])
        #expect(result["inserted"] as? Int == 2 && result["closed"] as? Int == 1)
        let clinics = try #require(try cli.run(["clinics", "list", "--json"]).json() as? [[String: Any]])
        #expect(clinics.map { $0["name"] as? String } == ["LOS ROBLES HOSPITAL", "MERCY HOSPITAL FORT SCOTT"])
        #expect(clinics.first?["address"] as? String == "393 S, TUSTIN STREET" && clinics.first?["isPediatric"] as? Bool == true)
        let again = try #require(try cli.run(["admin", "import-clinics", file.path, "--format", "hifld", "--json"]).json() as? [String: Any])
        #expect(again["updated"] as? Int == 2 && again["inserted"] as? Int == 0, "re-import updates, never duplicates")
    }
}
