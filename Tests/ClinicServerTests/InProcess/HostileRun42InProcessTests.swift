import Foundation
import HTTPTypes
import Testing

/// Issue 42's defects in uploads' names and multipart headers, sent as the hostile run sent
/// them, over HTTP in process: each test failed before its fix.
@Suite struct HostileRun42TestsInProcess {
    static let pdf = Data("%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF".utf8)

    /// A `multipart/form-data` body with one file part whose `Content-Disposition` parameters
    /// are `disposition` as bytes (not necessarily UTF-8).
    static func multipart(disposition: [UInt8], file: Data = pdf) -> (body: Data, type: String) {
        let boundary = "hostile42boundary"
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; ".utf8)
        body.append(contentsOf: disposition)
        body.append(Data("\r\nContent-Type: application/pdf\r\n\r\n".utf8))
        body.append(file)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        return (body, "multipart/form-data; boundary=\(boundary)")
    }

    /// A patient with one booking: their token and the appointment's id.
    static func booked(_ server: InProcessServer, _ login: String) async throws -> (token: String, appointment: Int) {
        let token = try await server.patient(login)
        let (department, _) = try await server.department()
        let booked = try await server.send(.POST, "/v1/appointments",
                                           json: ["departmentId": department, "start": try await server.freeSlot(department)], token: token)
        #expect(booked.status == 201, "\(booked.text)")
        return (token, try #require(booked.object["id"] as? Int))
    }

    // MARK: 9. A file name's length

    @Test func aFileNameIsAtMost255BytesNotCharacters() async throws {
        try await InProcessServer.run { server in
            let (token, appointment) = try await Self.booked(server, "names42")
            let path = "/v1/appointments/\(appointment)/attachments"
            let before = try server.fingerprint()
            // "e" and 2,000 combining acute accents: one character of 4,001 bytes; 200 of them.
            let cluster = "e" + String(repeating: "\u{301}", count: 2000)
            let huge = String(repeating: cluster, count: 200) + ".pdf"
            #expect(huge.count == 204 && huge.utf8.count > 800_000)
            let (body, type) = Self.multipart(disposition: Array("name=\"file\"; filename=\"\(huge)\"".utf8))
            let refused = try await server.send(.POST, path, raw: body, token: token, headers: ["Content-Type": type])
            #expect(refused.status == 400, "\(refused.text.prefix(300))")
            #expect(refused.errorCode == "invalid_input")
            #expect(refused.errorMessage?.contains("255 bytes") == true, "\(refused.text.prefix(300))")
            #expect(try server.fingerprint() == before, "a refused upload changed the database")

            // 255 bytes of UTF-8 are taken (127 two-byte letters and ".pdf" would be 258: one fewer).
            let fits = String(repeating: "é", count: 125) + ".pdf" // 254 bytes
            let taken = try await server.send(.POST, path + "?name=" + (fits.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
                                              raw: Self.pdf, token: token, headers: ["Content-Type": "application/pdf"])
            #expect(taken.status == 201, "\(taken.text)")
            #expect(taken.object["name"] as? String == fits)
            // A name without the kept extension gets it, and still fits.
            let bare = String(repeating: "a", count: 255)
            let extended = try await server.send(.POST, path + "?name=" + bare, raw: Self.pdf, token: token,
                                                 headers: ["Content-Type": "application/pdf"])
            #expect(extended.status == 201, "\(extended.text)")
            let kept = try #require(extended.object["name"] as? String)
            #expect(kept.utf8.count <= 255 && kept.hasSuffix(".pdf"), "\(kept)")
            let over = String(repeating: "é", count: 128) // 256 bytes, 128 characters
            let tooLong = try await server.send(.POST, path + "?name=" + (over.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
                                                raw: Self.pdf, token: token, headers: ["Content-Type": "application/pdf"])
            #expect(tooLong.status == 400, "\(tooLong.text)")
        }
    }

    // MARK: 14. Quoted parameters and Latin-1 names in a multipart part

    @Test func aQuotedFileNameMayHoldASemicolonAndEscapedQuote() async throws {
        try await InProcessServer.run { server in
            let (token, appointment) = try await Self.booked(server, "quoted42")
            let (body, type) = Self.multipart(disposition: Array(#"name="file"; filename="a\";b.pdf""#.utf8))
            let reply = try await server.send(.POST, "/v1/appointments/\(appointment)/attachments", raw: body, token: token,
                                              headers: ["Content-Type": type])
            #expect(reply.status == 201, "\(reply.text)")
            #expect(reply.object["name"] as? String == "a\";b.pdf", "\(reply.text)")
        }
    }

    @Test func aLatin1FileNameIsReadAsLatin1() async throws {
        try await InProcessServer.run { server in
            let (token, appointment) = try await Self.booked(server, "latin42")
            // "résumé.pdf" in ISO-8859-1: 0xE9 alone is not UTF-8.
            let latin1: [UInt8] = Array("name=\"file\"; filename=\"r".utf8) + [0xE9] + Array("sum".utf8) + [0xE9] + Array(".pdf\"".utf8)
            let (body, type) = Self.multipart(disposition: latin1)
            let reply = try await server.send(.POST, "/v1/appointments/\(appointment)/attachments", raw: body, token: token,
                                              headers: ["Content-Type": type])
            #expect(reply.status == 201, "\(reply.text)")
            #expect(reply.object["name"] as? String == "résumé.pdf", "\(reply.text)")

            // The same name in UTF-8 is still UTF-8, and RFC 8187's filename* still wins.
            let (utf8Body, _) = Self.multipart(disposition: Array("name=\"file\"; filename=\"na\u{EF}ve.pdf\"".utf8))
            let utf8 = try await server.send(.POST, "/v1/appointments/\(appointment)/attachments", raw: utf8Body, token: token,
                                             headers: ["Content-Type": type])
            #expect(utf8.object["name"] as? String == "na\u{EF}ve.pdf", "\(utf8.text)")
            let (extendedBody, _) = Self.multipart(disposition: Array("name=\"file\"; filename=\"x.pdf\"; filename*=UTF-8''%C3%A9t%C3%A9.pdf".utf8))
            let extended = try await server.send(.POST, "/v1/appointments/\(appointment)/attachments", raw: extendedBody, token: token,
                                                 headers: ["Content-Type": type])
            #expect(extended.object["name"] as? String == "été.pdf", "\(extended.text)")
        }
    }
}
