import ClinicImages
import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// Files on appointments and conversations with the clinic (issue 28), on both stores: who may
/// add, open and remove what, every bad file refused with nothing stored, photos re-encoded
/// without their GPS position, staff openings in the patient's access log, the conversation's
/// unread counts and inbox message, the export, and deletion with the account. "Now" is Sunday
/// 2026-11-22 12:00 UTC; the appointment is Monday 09:20 in Los Angeles.
@Suite struct AttachmentTests {
    static let fixtures = projectRoot.appendingPathComponent("Tests/ClinicImagesTests/Fixtures")
    let password = "staff-passphrase-77"

    func fixture(_ name: String) throws -> Data { try Data(contentsOf: Self.fixtures.appendingPathComponent(name)) }

    struct World {
        let system: ClinicSystem
        let clock: TestClock
        let anna: Client, bob: Client
        let visit: Appointment
        let desk: StaffMember, doctor: StaffMember, otherDoctor: StaffMember, otherClinic: StaffMember
        var files: AttachmentController { system.attachments }
        var annaId: Int64 { anna.id ?? 0 }
        var visitId: Int64 { visit.id ?? 0 }
    }

    func world(store: (any ClinicStore)? = nil) throws -> World {
        let clock = TestClock()
        let system = try makeSystem(clock: clock, images: VipsImageProcessor(), store: store)
        let anna = try register(system, "anna"), bob = try register(system, "bob")
        let therapy = try department(system, "LA1", "therapy")
        let visit = try system.appointments.createAppointment(
            clientId: anna.id ?? 0, departmentId: therapy.id ?? 0,
            at: .local(LocalDateTime(year: 2026, month: 11, day: 23, hour: 9, minute: 20)!))
        let other = try #require(try system.departments.getDoctorsByDepartmentId(therapy.id ?? 0).first { $0.id != visit.doctorId })
        let la1 = try clinic(system, "LA1").id ?? 0, la2 = try clinic(system, "LA2").id ?? 0
        func add(_ login: String, _ role: StaffRole, _ clinic: Int64, doctor: Int64? = nil) throws -> StaffMember {
            try system.staff.addStaff(StaffInput(login: login, name: "Sam", surname: "Lee", role: role, clinicId: clinic,
                                                 doctorId: doctor, password: password))
        }
        return World(system: system, clock: clock, anna: anna, bob: bob, visit: visit,
                     desk: try add("desk-a", .receptionist, la1), doctor: try add("doctor-a", .doctor, la1, doctor: visit.doctorId),
                     otherDoctor: try add("doctor-a2", .doctor, la1, doctor: other.id),
                     otherClinic: try add("desk-b", .receptionist, la2))
    }

    func upload(_ w: World, _ data: Data, type: String? = nil, name: String? = nil) throws -> AttachmentInfo {
        try w.files.add(clientId: w.annaId, appointmentId: w.visitId,
                        try w.files.prepare(AttachmentUpload(data: data, declaredType: type, name: name)))
    }

    @Test func aPatientAttachesListsDownloadsAndRemovesFilesUntilTheVisit() throws {
        let w = try world()
        let original = try fixture("portrait-exif.jpg")
        let photo = try upload(w, original, type: "image/jpeg", name: "rash.JPG")
        #expect(photo.contentType == "image/jpeg" && photo.name == "rash.jpg" && photo.width == 300 && photo.height == 400)
        #expect(photo.hasThumbnail && photo.author == .patient)
        let kept = try w.files.bytes(try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: photo.id))
        #expect(kept.count == photo.size && AttachmentFile.sha256(kept) == photo.sha256)
        #expect(kept.range(of: Data("Exif".utf8)) == nil, "the EXIF block, with the GPS position, is gone")
        let thumbnail = try w.files.bytes(try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: photo.id,
                                                           part: .thumbnail))
        #expect(AttachmentKind.detect(thumbnail) == .jpeg && thumbnail.count < kept.count)

        let heic = try upload(w, try fixture("small.heic"), type: "image/heic", name: "IMG_0001.HEIC")
        #expect(heic.name == "IMG_0001.jpg" && heic.contentType == "image/jpeg")
        let pdf = try upload(w, try fixture("tiny.pdf"), type: "application/pdf", name: "referral.pdf")
        let pdfBytes = try w.files.bytes(try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: pdf.id))
        let sent = try fixture("tiny.pdf")
        #expect(pdfBytes == sent, "a PDF is kept as sent")
        #expect(!pdf.hasThumbnail)

        // A file bigger than one chunk comes back whole, chunk by chunk.
        let big = try pdfOfSize(AttachmentLimits.chunkSize * 2 + 1234)
        let bigInfo = try upload(w, big, name: "scan.pdf")
        let bigContent = try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: bigInfo.id)
        let bigBack = try w.files.bytes(bigContent)
        #expect(bigContent.chunkCount == 3 && bigBack == big)

        #expect(try w.files.list(clientId: w.annaId, appointmentId: w.visitId).map(\.id) == [photo.id, heic.id, pdf.id, bigInfo.id])
        _ = try upload(w, try fixture("alpha.png"), name: "card.png")
        // A sixth file is refused, and nothing changes.
        let before = try fingerprint(w.system)
        #expect(expectError(.limitReached) { _ = try upload(w, try fixture("tiny.pdf")) }?.key == .attachmentLimit)
        #expect(try fingerprint(w.system) == before)

        // Another patient: not theirs, refused before the file is even decoded (a broken photo
        // for someone else's appointment is `forbidden`, not `invalid_input`).
        #expect(expectError(.forbidden) {
            _ = try w.files.attach(clientId: w.bob.id ?? 0, appointmentId: w.visitId, AttachmentUpload(data: try fixture("truncated.jpg")))
        } != nil)
        #expect(expectError(.notFound) {
            _ = try w.files.attach(w.otherClinic, appointmentId: w.visitId, AttachmentUpload(data: try fixture("truncated.jpg")))
        } != nil)
        #expect(expectError(.forbidden) {
            _ = try w.files.list(clientId: w.bob.id ?? 0, appointmentId: w.visitId)
        } != nil)
        #expect(expectError(.forbidden) {
            _ = try w.files.add(clientId: w.bob.id ?? 0, appointmentId: w.visitId, try w.files.prepare(AttachmentUpload(data: try fixture("tiny.pdf"))))
        } != nil)

        // Removed: gone from the list and unreadable; a sixth fits again.
        try w.files.remove(clientId: w.annaId, appointmentId: w.visitId, attachmentId: pdf.id)
        #expect(expectError(.notFound) { _ = try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: pdf.id) } != nil)
        #expect(expectError(.notFound) { _ = try w.files.chunk(bigContent, index: 3) } != nil)
        #expect(try storedInt(w.system, "SELECT count(*) FROM attachment_chunks WHERE attachment_id = \(pdf.id)") == 0)
        _ = try upload(w, try fixture("tiny.pdf"))

        // Once the visit has started, the patient can neither add nor remove.
        w.clock.advance(30 * 3600)
        #expect(expectError(.tooLate) { try w.files.remove(clientId: w.annaId, appointmentId: w.visitId, attachmentId: photo.id) } != nil)
        #expect(expectError(.tooLate) { _ = try upload(w, try fixture("tiny.pdf")) } != nil)
    }

    @Test func badFilesAreRefusedWithAClearErrorAndNothingStored() throws {
        let w = try world()
        let before = try fingerprint(w.system)
        let jpeg = try fixture("portrait-exif.jpg"), png = try fixture("alpha.png"), pdf = try fixture("tiny.pdf")
        let cases: [(String, Data, String?, String?, ClinicError.Code, MessageKey)] = [
            ("empty", Data(), nil, "x.jpg", .invalidInput, .attachmentEmpty),
            ("11 MiB", Data(repeating: 0x25, count: 11 * 1024 * 1024), nil, nil, .fileTooLarge, .attachmentTooLarge),
            ("a PNG named .pdf", png, nil, "card.pdf", .unsupportedType, .attachmentTypeMismatch),
            ("a PDF named .jpg", pdf, nil, "photo.jpg", .unsupportedType, .attachmentTypeMismatch),
            ("a PNG sent as a PDF", png, "application/pdf", nil, .unsupportedType, .attachmentTypeMismatch),
            ("HTML", Data("<!doctype html><script>alert(1)</script>".utf8), "text/html", "a.html", .unsupportedType,
             .attachmentUnsupported),
            ("SVG", Data(#"<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>"#.utf8), "image/svg+xml", "a.svg",
             .unsupportedType, .attachmentUnsupported),
            ("a PDF with JavaScript", PDFMaker.make(catalog: "/OpenAction << /S /JavaScript /JS (app.alert(1)) >>"),
             nil, nil, .invalidInput, .attachmentPDFActive),
            ("a PDF with JavaScript spelled in #xx", PDFMaker.make(loose: ["<< /S /J#61vaScript >>"]), nil, nil,
             .invalidInput, .attachmentPDFActive),
            ("a PDF with JavaScript in a compressed object stream",
             PDFMaker.make(catalog: "/OpenAction 4 0 R", packed: [PDFActiveContentTests.script], encoding: .flateWithPNGUp(columns: 5)),
             nil, nil, .invalidInput, .attachmentPDFActive),
            // Issue 42: what qpdf cannot open is not kept (objects and no trailer to find them).
            ("a PDF that cannot be read", Data("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF".utf8), nil, nil,
             .invalidInput, .attachmentUndecodable),
            ("a 50,000 × 50,000 PNG of 69 bytes", try bomb(), nil, nil, .invalidInput, .attachmentPixels),
            ("a truncated JPEG", try fixture("truncated.jpg"), nil, nil, .invalidInput, .attachmentUndecodable),
            ("../ in the name", jpeg, nil, "../../etc/passwd.jpg", .invalidInput, .attachmentNameInvalid),
            ("NUL in the name", jpeg, nil, "a\u{0}.jpg", .invalidInput, .attachmentNameInvalid),
            ("a bidi override in the name", jpeg, nil, "invoice\u{202E}gpj.exe", .invalidInput, .attachmentNameInvalid),
            ("1,000 characters of name", jpeg, nil, String(repeating: "a", count: 996) + ".jpg", .invalidInput,
             .attachmentNameInvalid),
        ]
        for (what, data, type, name, code, key) in cases {
            var refused: ClinicError?
            do { _ = try upload(w, data, type: type, name: name) } catch let error as ClinicError { refused = error }
            #expect(refused?.code == code && refused?.key == key, "\(what): \(String(describing: refused))")
            #expect(refused.map { !$0.message(in: .en).isEmpty && !$0.message(in: .ru).isEmpty } == true)
        }
        #expect(try fingerprint(w.system) == before, "nothing stored")
        // A JPEG with a script appended is taken as the photo it is: what is kept is written
        // again from the pixels, and the script is not in it.
        let polyglot = jpeg + Data("<script>alert(document.cookie)</script>".utf8)
        let kept = try upload(w, polyglot, name: "rash.jpg")
        let bytes = try w.files.bytes(try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: kept.id))
        #expect(bytes.range(of: Data("<script>".utf8)) == nil)
    }

    /// The PDF check is a port (`PDFChecking`, ClinicPDF's libqpdf composed by the programs):
    /// a system given none refuses every PDF, a harmless one included, and stores nothing.
    @Test func withoutAPDFCheckAPDFIsRefused() throws {
        let system = try makeSystem(pdfs: nil)
        let upload = AttachmentUpload(data: try fixture("tiny.pdf"), declaredType: "application/pdf", name: "letter.pdf")
        let refused = expectError(.unsupportedType) { _ = try system.attachments.prepare(upload) }
        #expect(refused?.key == .attachmentUnsupported)
        let checked = try makeSystem().attachments.prepare(upload)
        #expect(checked.contentType == "application/pdf" && checked.name == "letter.pdf")
    }

    /// By both paths (issue 56: the CLI's seam and a server's awaited `FrontDeskReadsStore.openFile`).
    @Test(arguments: [false, true]) func theClinicOpensFilesEachOpeningInTheAccessLogAndOnlyItsOwn(awaited: Bool) async throws {
        let w = try world()
        let files = w.files
        func open(_ member: StaffMember, _ id: Int64, part: AttachmentPart = .file, requestId: String? = nil) async throws
            -> AttachmentContent {
            if awaited { return try await files.open(member, appointmentId: w.visitId, attachmentId: id, part: part, requestId: requestId) }
            return try { try files.open(member, appointmentId: w.visitId, attachmentId: id, part: part, requestId: requestId) }()
        }
        func own(_ clientId: Int64, _ id: Int64, part: AttachmentPart = .file) async throws -> AttachmentContent {
            if awaited { return try await files.open(clientId: clientId, appointmentId: w.visitId, attachmentId: id, part: part) }
            return try { try files.open(clientId: clientId, appointmentId: w.visitId, attachmentId: id, part: part) }()
        }
        let photo = try upload(w, try fixture("portrait-exif.jpg"), name: "rash.jpg")
        #expect(try { try files.list(w.desk, appointmentId: w.visitId) }().map(\.id) == [photo.id])
        let content = try await open(w.desk, photo.id, requestId: "req-1")
        let opened = try files.bytes(content)
        #expect(try await awaitedBytes(files, content) == opened)
        #expect(content.info.name == "rash.jpg" && content.size == opened.count)
        #expect(opened.range(of: Data("Exif".utf8)) == nil && AttachmentFile.sha256(opened) == photo.sha256)
        let thumbnail = try await open(w.doctor, photo.id, part: .thumbnail)
        let small = try files.bytes(thumbnail)
        #expect(thumbnail.part == .thumbnail && small.count == thumbnail.size && thumbnail.size > 0)
        let log = try { try w.system.clients.accessLog(clientId: w.annaId) }()
        #expect(log.filter { $0.action == "attachment.open" }.count == 1 && log.filter { $0.action == "attachment.thumbnail" }.count == 1,
                "\(log.map(\.action))")
        #expect(log.contains { $0.action == "attachment.open" && $0.staffId == w.desk.id && $0.requestId == "req-1"
                                && $0.appointmentId == w.visitId && $0.detail.contains("image/jpeg") })
        // Another clinic's staff, a doctor of another visit, another patient, a file that is not
        // there find nothing; nothing is logged, nothing changes. The patient's own opening is not logged.
        let before = try fingerprint(w.system)
        for member in [w.otherClinic, w.otherDoctor] {
            #expect(await expectError(.notFound) { _ = try await open(member, photo.id) } != nil)
            #expect(expectError(.notFound) { _ = try files.list(member, appointmentId: w.visitId) } != nil)
        }
        #expect(await expectError(.notFound) { _ = try await open(w.desk, 99_999) } != nil)
        #expect(await expectError(.forbidden) { _ = try await own(w.bob.id ?? 0, photo.id) } != nil)
        #expect(await expectError(.notFound) { _ = try await own(w.annaId, 99_999) } != nil)
        #expect(try files.bytes(try await own(w.annaId, photo.id)) == opened)
        #expect(try fingerprint(w.system) == before)
        // The doctor attaches a care plan; the patient sees it and cannot remove it.
        let plan = try w.files.add(w.doctor, appointmentId: w.visitId,
                                   try w.files.prepare(AttachmentUpload(data: try fixture("tiny.pdf"), name: "care plan.pdf")))
        #expect(plan.author == .staff && plan.name == "care plan.pdf")
        #expect(await expectError(.notFound) { _ = try await own(w.annaId, plan.id, part: .thumbnail) } != nil, "a PDF has no thumbnail")
        #expect(try { try files.list(clientId: w.annaId, appointmentId: w.visitId) }().map(\.id) == [photo.id, plan.id])
        #expect(expectError(.forbidden) { try files.remove(clientId: w.annaId, appointmentId: w.visitId, attachmentId: plan.id) } != nil)
        #expect(try { try w.system.clients.accessLog(clientId: w.annaId) }().contains { $0.action == "attachment.add" })
    }

    /// The inbox page's quotes by both paths (issue 56: the seam, and `InboxStore.clinicAnswers`
    /// awaited): each clinic's message quotes the answer it announced (the latest written before
    /// it, its first `InboxEntry.quoteLength` characters); nothing is marked read.
    @Test(arguments: [false, true]) func theInboxQuotesTheAnswerEachMessageAnnounced(awaited: Bool) async throws {
        let w = try world()
        let system = w.system
        func inbox(_ clientId: Int64? = nil) async throws -> [InboxEntry] {
            if awaited { return try await system.inbox(clientId: clientId ?? w.annaId) }
            return try { try system.inbox(clientId: clientId ?? w.annaId) }()
        }
        #expect(try await inbox().allSatisfy { $0.quote == nil })
        let long = String(repeating: "Yes. ", count: 60).trimmingCharacters(in: .whitespaces)
        try {
            _ = try w.files.write(clientId: w.annaId, appointmentId: w.visitId, text: "May I bring my daughter?")
            _ = try w.files.answer(w.desk, appointmentId: w.visitId, text: "First answer")
        }()
        w.clock.advance(120)
        try {
            _ = try w.files.write(clientId: w.annaId, appointmentId: w.visitId, text: "And my son?")
            _ = try w.files.answer(w.desk, appointmentId: w.visitId, text: long)
        }()
        let before = try fingerprint(system)
        let quotes = try await inbox().filter { $0.message.kind == .clinic }.map(\.quote)
        #expect(quotes == [String(long.prefix(InboxEntry.quoteLength)) + "…", "First answer"], "newest first, each its own answer")
        #expect(try await inbox().filter { $0.message.kind != .clinic }.allSatisfy { $0.quote == nil })
        #expect(try fingerprint(system) == before, "nothing marked read")
        #expect(try await inbox(w.bob.id ?? 0).allSatisfy { $0.quote == nil }, "another patient's inbox opens no conversation of Anna's")
        #expect(await expectError(.notLoggedIn) { _ = try await inbox(99_999) } != nil)
    }

    @Test func aConversationWithUnreadCountsAndAnInboxMessageInThePatientsLanguage() throws {
        let w = try world()
        _ = try w.system.clients.updateProfile(clientId: w.annaId, ProfileChanges(language: .ru))
        let question = try w.files.write(clientId: w.annaId, appointmentId: w.visitId, text: "  May I bring my daughter?  ")
        #expect(question.text == "May I bring my daughter?" && question.author == .patient)
        var open = try w.files.threads(w.desk, state: .open)
        #expect(open.items.map(\.appointmentId) == [w.visitId] && open.unread == 1 && open.items[0].unread == 1)
        #expect(expectError(.forbidden) { _ = try w.files.threads(w.doctor, state: .open) } != nil)
        #expect(try w.files.threads(w.otherClinic, state: .open).items.isEmpty)

        let read = try w.files.conversation(w.desk, appointmentId: w.visitId)
        #expect(read.unread == 1 && read.messages.map(\.text) == ["May I bring my daughter?"])
        #expect(try w.files.threads(w.desk, state: .open).unread == 0)
        let inboxBefore = try w.system.clients.messages(clientId: w.annaId).count
        let answer = try w.files.answer(w.desk, appointmentId: w.visitId, text: "Yes, of course.")
        #expect(answer.staffName == "Sam Lee")
        let told = try #require(try w.system.clients.messages(clientId: w.annaId).first)
        #expect(try w.system.clients.messages(clientId: w.annaId).count == inboxBefore + 1)
        #expect(told.subject.contains("ответ") && told.appointmentId == w.visitId && !told.body.contains("Yes, of course"),
                "told in Russian where to read it, without the words: \(told.subject) / \(told.body)")
        // The inbox page quotes the answer its message announced, read from the conversation
        // (nothing marked read by it).
        #expect(try w.system.inbox(clientId: w.annaId).first?.quote == "Yes, of course.")
        #expect(try w.system.inbox(clientId: w.annaId).filter { $0.message.kind != .clinic }.allSatisfy { $0.quote == nil })
        #expect(try w.files.unreadAnswers(clientId: w.annaId) == 1)
        let seen = try w.files.conversation(clientId: w.annaId, appointmentId: w.visitId)
        #expect(seen.unread == 1 && seen.messages.map(\.author) == [.patient, .staff])
        #expect(try w.files.unreadAnswers(clientId: w.annaId) == 0)
        #expect(expectError(.forbidden) { _ = try w.files.conversation(clientId: w.bob.id ?? 0, appointmentId: w.visitId) } != nil)

        try w.files.close(w.desk, appointmentId: w.visitId)
        #expect(try w.files.threads(w.desk, state: .open).items.isEmpty)
        #expect(try w.files.threads(w.desk, state: .closed).items.map(\.appointmentId) == [w.visitId])
        // The patient's next message opens it again.
        _ = try w.files.write(clientId: w.annaId, appointmentId: w.visitId, text: "Thank you!")
        open = try w.files.threads(w.desk, state: .open)
        #expect(open.items.map(\.appointmentId) == [w.visitId] && open.unread == 1)
        // Text over 2,000 characters, empty, or with control characters: refused, nothing stored.
        let before = try fingerprint(w.system)
        for text in [String(repeating: "a", count: 2001), "   ", "bell\u{7}"] {
            #expect(expectError(.invalidInput) { _ = try w.files.write(clientId: w.annaId, appointmentId: w.visitId, text: text) } != nil)
        }
        #expect(try fingerprint(w.system) == before)
        // The text is sealed at rest.
        #expect(try storedInt(w.system, "SELECT count(*) FROM thread_messages") == 3)
        let log = try w.system.clients.accessLog(clientId: w.annaId).map(\.action)
        #expect(log.contains("thread.read") && log.contains("thread.answer") && log.contains("thread.close"))
    }

    /// Issue 56: a look at a conversation by both paths, the CLI's seam and a server's awaited
    /// store (`FrontDeskReadsStore.readConversation`): the reader's unread count is cleared, a
    /// page and its cursor, the staff's names, the desk's read audited; refusals change nothing.
    @Test(arguments: [false, true]) func aLookAtAConversationReadsItsMessages(awaited: Bool) async throws {
        let w = try world()
        let files = w.files
        func patient(_ clientId: Int64, limit: Int? = nil, cursor: String? = nil) async throws -> Conversation {
            if awaited { return try await files.conversation(clientId: clientId, appointmentId: w.visitId, limit: limit, cursor: cursor) }
            return try { try files.conversation(clientId: clientId, appointmentId: w.visitId, limit: limit, cursor: cursor) }()
        }
        func desk(_ member: StaffMember, _ id: Int64? = nil) async throws -> Conversation {
            if awaited { return try await files.conversation(member, appointmentId: id ?? w.visitId, requestId: "req-look") }
            return try { try files.conversation(member, appointmentId: id ?? w.visitId, requestId: "req-look") }()
        }
        #expect(try await patient(w.annaId).messages.isEmpty, "no conversation yet")
        try {
            for index in 1...3 { _ = try files.write(clientId: w.annaId, appointmentId: w.visitId, text: "Question \(index)") }
            _ = try files.answer(w.desk, appointmentId: w.visitId, text: "Answer")
        }()
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { _ = try await patient(w.bob.id ?? 0) } != nil)
        #expect(await expectError(.forbidden) { _ = try await desk(w.doctor) } != nil)
        #expect(await expectError(.notFound) { _ = try await desk(w.otherClinic) } != nil)
        #expect(await expectError(.notFound) { _ = try await desk(w.desk, 99_999) } != nil)
        #expect(await expectError(.invalidInput) { _ = try await patient(w.annaId, cursor: "nonsense") } != nil)
        #expect(await expectError(.invalidInput) { _ = try await patient(w.annaId, limit: 0) } != nil)
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")
        let page = try await patient(w.annaId, limit: 2)
        #expect(page.unread == 1 && page.messages.map(\.text) == ["Question 3", "Answer"] && page.nextCursor != nil)
        #expect(page.messages.last?.staffName == "Sam Lee" && page.messages.first?.author == .patient)
        let earlier = try await patient(w.annaId, limit: 2, cursor: page.nextCursor)
        #expect(earlier.unread == 0 && earlier.messages.map(\.text) == ["Question 1", "Question 2"] && earlier.nextCursor == nil)
        #expect(try await patient(w.annaId).messages.count == 4, "without a page, all of it")
        _ = try { try files.write(clientId: w.annaId, appointmentId: w.visitId, text: "One more") }()
        let read = try await desk(w.desk)
        #expect(read.unread == 1 && read.messages.count == 5)
        #expect(try await desk(w.desk).unread == 0, "read now")
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'thread.read' AND request_id = 'req-look'") == 2)
        #expect(try auditIsSound(w.system))
    }

    /// Issue 56: the front desk's list of conversations by both paths, the CLI's seam and a
    /// server's awaited store (`FrontDeskReadsStore.deskThreads`): named, with the patient's
    /// name and the latest message's first line, each patient named a read in the audit trail;
    /// unnamed, neither; the unread count of the open ones on the list of closed ones too.
    @Test(arguments: [false, true]) func theFrontDesksListOfConversations(awaited: Bool) async throws {
        let w = try world()
        let files = w.files
        func list(_ member: StaffMember, _ state: StoredThread.State, named: Bool) async throws -> ThreadList {
            if awaited { return try await files.threads(member, state: state, named: named, requestId: "req-list") }
            return try { try files.threads(member, state: state, named: named, requestId: "req-list") }()
        }
        let long = String(repeating: "word ", count: 40) + "\nsecond line"
        try { _ = try files.write(clientId: w.annaId, appointmentId: w.visitId, text: long) }()
        #expect(await expectError(.forbidden) { _ = try await list(w.doctor, .open, named: true) } != nil)
        let reads = "SELECT count(*) FROM audit_events WHERE action = 'patient.read' AND request_id = 'req-list'"
        let plain = try await list(w.desk, .open, named: false)
        #expect(plain.items.map(\.appointmentId) == [w.visitId] && plain.unread == 1)
        #expect(plain.items.allSatisfy { $0.patientName == nil && $0.preview == nil })
        #expect(try storedInt(w.system, reads) == 0, "an unnamed list reads no patient")
        let named = try await list(w.desk, .open, named: true)
        let item = try #require(named.items.first)
        #expect(item.patientName == "Anna Smith" && item.unread == 1 && named.zone.identifier == "America/Los_Angeles")
        #expect(item.preview?.hasPrefix("word word") == true && item.preview?.hasSuffix("…") == true
                && item.preview?.contains("second") == false, "\(item.preview ?? "")")
        #expect(try storedInt(w.system, reads) == 1)
        #expect(try await list(w.otherClinic, .open, named: true).items.isEmpty)
        let closed = try await list(w.desk, .closed, named: false)
        #expect(closed.items.isEmpty && closed.unread == 1, "the open ones' unread count on the closed list")
        #expect(try auditIsSound(w.system))
    }

    /// Issue 56: a conversation closed and the unread answers counted by both paths, the CLI's
    /// seam and a server's awaited store (`FrontDeskChangesStore.deskCloseThread`,
    /// `InboxStore.unreadAnswers`); a refusal changes nothing.
    @Test(arguments: [false, true]) func aConversationIsClosedByTheFrontDeskOnly(awaited: Bool) async throws {
        let w = try world()
        let files = w.files
        func close(_ member: StaffMember, _ id: Int64) async throws {
            if awaited { try await files.close(member, appointmentId: id, requestId: "req-close") } else {
                try { try files.close(member, appointmentId: id, requestId: "req-close") }()
            }
        }
        func unread() async throws -> Int {
            awaited ? try await files.unreadAnswers(clientId: w.annaId) : try { try files.unreadAnswers(clientId: w.annaId) }()
        }
        try {
            _ = try files.write(clientId: w.annaId, appointmentId: w.visitId, text: "May I bring my daughter?")
            _ = try files.answer(w.desk, appointmentId: w.visitId, text: "Yes, of course.")
            _ = try files.answer(w.desk, appointmentId: w.visitId, text: "Bring her card too.")
        }()
        #expect(try await unread() == 2)
        let noThread = try { try w.system.appointments.createAppointment(
            clientId: w.annaId, departmentId: w.visit.departmentId,
            at: .local(LocalDateTime(year: 2026, month: 11, day: 24, hour: 9, minute: 20)!)) }()
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { try await close(w.doctor, w.visitId) } != nil)
        #expect(await expectError(.notFound) { try await close(w.otherClinic, w.visitId) }?.key == .appointmentNotFound)
        #expect(await expectError(.notFound) { try await close(w.desk, 99_999) }?.key == .appointmentNotFound)
        #expect(await expectError(.notFound) { try await close(w.desk, noThread.id ?? 0) }?.key == .threadNotFound)
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")
        try await close(w.desk, w.visitId)
        #expect(try { try files.threads(w.desk, state: .closed) }().items.map(\.appointmentId) == [w.visitId])
        #expect(try { try files.threads(w.desk, state: .open) }().items.isEmpty)
        #expect(try await unread() == 2, "closing leaves the patient's unread answers")
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'thread.close' AND request_id = 'req-close'") == 1)
        #expect(try auditIsSound(w.system))
    }

    /// Issue 56: the patient's message and the front desk's answer by both paths, the CLI's seam
    /// and a server's awaited store (`FrontDeskChangesStore.postInThread`): who may write about
    /// which appointment, a file pointed at must be the appointment's, the answer told in the
    /// patient's inbox in their language (e-mailed to a confirmed address) with its audit row;
    /// every refusal changes nothing.
    @Test(arguments: [false, true]) func aPatientWritesAndTheFrontDeskAnswers(awaited: Bool) async throws {
        let w = try world()
        let files = w.files
        func write(_ clientId: Int64, _ id: Int64, _ text: String, file: Int64? = nil) async throws -> ThreadMessage {
            if awaited { return try await files.write(clientId: clientId, appointmentId: id, text: text, attachmentId: file) }
            return try { try files.write(clientId: clientId, appointmentId: id, text: text, attachmentId: file) }()
        }
        func answer(_ member: StaffMember, _ id: Int64, _ text: String, file: Int64? = nil) async throws -> ThreadMessage {
            if awaited { return try await files.answer(member, appointmentId: id, text: text, attachmentId: file, requestId: "req-answer") }
            return try { try files.answer(member, appointmentId: id, text: text, attachmentId: file, requestId: "req-answer") }()
        }
        let photo = try upload(w, try fixture("portrait-exif.jpg"), type: "image/jpeg", name: "rash.jpg")
        let bobsVisit = try { try w.system.appointments.createAppointment(
            clientId: w.bob.id ?? 0, departmentId: w.visit.departmentId,
            at: .local(LocalDateTime(year: 2026, month: 11, day: 24, hour: 9, minute: 20)!)) }()
        try await {
            _ = try await w.system.clients.updateProfile(clientId: w.annaId, ProfileChanges(language: .ru))
            try await confirmEmail(w.system, clientId: w.annaId, "anna@example.com")
        }()
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { _ = try await write(w.annaId, bobsVisit.id ?? 0, "Hello") }?.key == .notYourAppointment)
        #expect(await expectError(.notFound) { _ = try await write(w.annaId, 99_999, "Hello") }?.key == .appointmentNotFound)
        #expect(await expectError(.notFound) { _ = try await write(w.annaId, w.visitId, "Hello", file: 99_999) }?.key
                == .attachmentNotFound)
        #expect(await expectError(.invalidInput) { _ = try await write(w.annaId, w.visitId, "bell\u{7}") } != nil)
        #expect(await expectError(.forbidden) { _ = try await answer(w.doctor, w.visitId, "Yes") } != nil)
        #expect(await expectError(.notFound) { _ = try await answer(w.otherClinic, w.visitId, "Yes") }?.key == .appointmentNotFound)
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")

        let question = try await write(w.annaId, w.visitId, "  Is this rash worrying?  ", file: photo.id)
        #expect(question.text == "Is this rash worrying?" && question.author == .patient && question.attachmentId == photo.id
                && question.staffName == nil)
        #expect(try { try files.threads(w.desk, state: .open) }().unread == 1)
        let mailBefore = try #require(try storedInt(w.system, "SELECT count(*) FROM deliveries WHERE purpose = 'message'"))
        let reply = try await answer(w.desk, w.visitId, "No, but come on Monday.", file: photo.id)
        #expect(reply.author == .staff && reply.staffName == "Sam Lee" && reply.attachmentId == photo.id)
        let told = try #require(try { try w.system.clients.messages(clientId: w.annaId) }().first)
        #expect(told.subject.contains("ответ") && told.appointmentId == w.visitId && told.kind == .clinic
                && !told.body.contains("Monday"), "told in Russian where to read it: \(told.subject) / \(told.body)")
        #expect(try storedInt(w.system, "SELECT count(*) FROM deliveries WHERE purpose = 'message'") == mailBefore + 1,
                "e-mailed to the confirmed address")
        let thread = try { try files.conversation(clientId: w.annaId, appointmentId: w.visitId) }()
        #expect(thread.messages.map(\.text) == ["Is this rash worrying?", "No, but come on Monday."] && thread.unread == 1)
        #expect(try { try files.threads(w.desk, state: .open) }().unread == 0, "the desk's answer reads the patient's message")
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE action = 'thread.answer' AND request_id = 'req-answer'") == 1)
        #expect(try auditIsSound(w.system))
    }

    /// The pages' one call, by both paths (issue 56: the CLI's seam and a server's awaited
    /// `FrontDeskReadsStore.readFolder`): the patient's folder reads the clinic's answers and
    /// says whether files may still change; the clinic's is audited, and a doctor gets no
    /// conversation; a refusal changes nothing.
    @Test(arguments: [false, true]) func anAppointmentsFolderForEachReader(awaited: Bool) async throws {
        let w = try world()
        let files = w.files
        func mine(_ clientId: Int64? = nil, _ id: Int64? = nil, cursor: String? = nil) async throws -> AppointmentFolder {
            let clientId = clientId ?? w.annaId, id = id ?? w.visitId
            if awaited { return try await files.folder(clientId: clientId, appointmentId: id, cursor: cursor) }
            return try { try files.folder(clientId: clientId, appointmentId: id, cursor: cursor) }()
        }
        func clinics(_ member: StaffMember, _ id: Int64? = nil, cursor: String? = nil) async throws -> AppointmentFolder {
            let id = id ?? w.visitId
            if awaited { return try await files.folder(member, appointmentId: id, requestId: "r-1", cursor: cursor) }
            return try { try files.folder(member, appointmentId: id, requestId: "r-1", cursor: cursor) }()
        }
        let photo = try upload(w, try fixture("portrait-exif.jpg"), type: "image/jpeg", name: "rash.jpg")
        _ = try { try files.write(clientId: w.annaId, appointmentId: w.visitId, text: "May I bring my daughter?") }()
        let before = try fingerprint(w.system)
        #expect(await expectError(.notFound) { _ = try await clinics(w.otherClinic) } != nil)
        #expect(await expectError(.notFound) { _ = try await clinics(w.otherDoctor) } != nil)
        #expect(await expectError(.notFound) { _ = try await clinics(w.desk, 99_999) } != nil)
        #expect(await expectError(.forbidden) { _ = try await mine(w.bob.id ?? 0) } != nil)
        #expect(await expectError(.notFound) { _ = try await mine(w.annaId, 99_999) } != nil)
        #expect(await expectError(.invalidInput) { _ = try await clinics(w.desk, cursor: "nonsense") } != nil)
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")
        let desk = try await clinics(w.desk)
        #expect(desk.files.map(\.id) == [photo.id] && desk.files.first?.name == "rash.jpg")
        #expect(desk.patientName == "Anna Smith" && !desk.patientMayChange)
        #expect(desk.conversation?.unread == 1 && desk.conversation?.messages.map(\.text) == ["May I bring my daughter?"])
        #expect(desk.zone.identifier == "America/Los_Angeles")
        #expect(try { try files.threads(w.desk, state: .open) }().unread == 0, "the desk's look reads the conversation")
        let log = try { try w.system.clients.accessLog(clientId: w.annaId) }()
        #expect(log.filter { $0.action == "attachment.list" }.map(\.detail) == ["1 files"])
        #expect(log.filter { $0.action == "thread.read" }.count == 1)
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE request_id = 'r-1'") == 2)
        let doctor = try await clinics(w.doctor)
        #expect(doctor.files.map(\.id) == [photo.id] && doctor.conversation == nil && doctor.patientName == "Anna Smith")
        // The API's lists of files: the same rules, the clinic's one an audit row, the patient's none.
        func lists(_ member: StaffMember) async throws -> [AttachmentInfo] {
            if awaited { return try await files.list(member, appointmentId: w.visitId, requestId: "r-2") }
            return try { try files.list(member, appointmentId: w.visitId, requestId: "r-2") }()
        }
        func ownList(_ clientId: Int64) async throws -> [AttachmentInfo] {
            if awaited { return try await files.list(clientId: clientId, appointmentId: w.visitId) }
            return try { try files.list(clientId: clientId, appointmentId: w.visitId) }()
        }
        let listed = try fingerprint(w.system)
        #expect(await expectError(.notFound) { _ = try await lists(w.otherDoctor) } != nil)
        #expect(await expectError(.forbidden) { _ = try await ownList(w.bob.id ?? 0) } != nil)
        #expect(try await ownList(w.annaId).map(\.name) == ["rash.jpg"])
        #expect(try fingerprint(w.system) == listed, "a refusal and the patient's own list change nothing")
        #expect(try await lists(w.desk).map(\.id) == [photo.id])
        #expect(try storedInt(w.system, "SELECT count(*) FROM audit_events WHERE request_id = 'r-2' AND action = 'attachment.list'") == 1)

        _ = try { try files.answer(w.desk, appointmentId: w.visitId, text: "Yes, of course.") }()
        let unchanged = try fingerprint(w.system)
        let patients = try await mine()
        #expect(patients.patientMayChange && patients.patientName == nil && patients.conversation?.unread == 1)
        #expect(patients.conversation?.messages.last?.staffName == "Sam Lee" && patients.files.map(\.id) == [photo.id])
        #expect(try fingerprint(w.system) != unchanged, "the answer is marked read")
        #expect(try { try files.unreadAnswers(clientId: w.annaId) }() == 0)
        let again = try fingerprint(w.system)
        #expect(try await mine().conversation?.unread == 0)
        #expect(try fingerprint(w.system) == again, "a look with nothing to mark read writes nothing")
        // Once the visit has started, the patient's files no longer change.
        w.clock.advance(w.visit.startsAt.timeIntervalSince(w.clock.now) + 60)
        #expect(try await !mine().patientMayChange)
        // The clinic reads what the patient wrote when booking (sealed at rest).
        let noted = try w.system.appointments.createAppointment(
            clientId: w.annaId, departmentId: w.visit.departmentId,
            at: .local(LocalDateTime(year: 2026, month: 11, day: 24, hour: 9, minute: 20)!), notes: "Rash on the left arm")
        #expect(try await clinics(w.desk, noted.id ?? 0).notes == "Rash on the left arm")
        #expect(try auditIsSound(w.system))
    }

    /// The retention rule: an appointment's files and conversation go `days` after its end,
    /// not before; each purge is in the patient's access log; a bad number changes nothing.
    @Test func filesAndMessagesGoWithTheAppointmentsRetention() async throws {
        let w = try world()
        _ = try upload(w, try fixture("portrait-exif.jpg"), type: "image/jpeg", name: "rash.jpg")
        _ = try await w.files.write(clientId: w.annaId, appointmentId: w.visitId, text: "May I bring my daughter?")
        _ = try await w.files.answer(w.desk, appointmentId: w.visitId, text: "Yes, of course.")
        #expect(try await w.files.purge(afterDays: 1) == AttachmentPurge(appointments: 0, files: 0, messages: 0))
        // Two days after the visit's end: kept for a 3-day retention, gone for a 1-day one.
        w.clock.advance(w.visit.endsAt.timeIntervalSince(w.clock.now) + 2 * 86_400)
        #expect(try await w.files.purge(afterDays: 3).appointments == 0)
        #expect(try storedInt(w.system, "SELECT count(*) FROM attachment_chunks") ?? 0 > 0)
        for days in [0, -1, AttachmentController.maximumRetentionDays + 1] {
            #expect(await expectError(.invalidInput) { _ = try await w.files.purge(afterDays: days) } != nil)
        }
        #expect(try await w.files.purge(afterDays: 1) == AttachmentPurge(appointments: 1, files: 1, messages: 2))
        let folder = try await w.files.folder(clientId: w.annaId, appointmentId: w.visitId)
        #expect(folder.files.isEmpty && folder.conversation?.messages.isEmpty == true)
        for table in ["attachments", "attachment_chunks", "threads", "thread_messages"] {
            #expect(try storedInt(w.system, "SELECT count(*) FROM \(table)") == 0, "\(table)")
        }
        let purge = try await #require(try w.system.clients.accessLog(clientId: w.annaId).first { $0.action == "attachment.purge" })
        #expect(purge.appointmentId == w.visitId && purge.actor == "operator" && purge.detail.hasPrefix("1 files, 2 messages"))
        #expect(try await w.files.purge(afterDays: 1).appointments == 0)
    }

    /// By both paths (issue 56: the CLI's seam and a server's awaited `ProfileReadsStore.exportFacts`):
    /// the record, the appointments with their notes opened and their history, the files, the
    /// conversations with the staff's names (read, not marked read), the inbox, the sessions.
    @Test(arguments: [false, true]) func theExportHasTheFilesAndConversationsAndTheyGoWithTheAccount(awaited: Bool) async throws {
        let w = try world()
        let system = w.system
        func exported() async throws -> PersonalExport {
            if awaited { return try await system.clients.export(clientId: w.annaId) }
            return try { try system.clients.export(clientId: w.annaId) }()
        }
        let photo = try upload(w, try fixture("portrait-exif.jpg"), name: "rash.jpg")
        try await {
            _ = try await w.files.write(clientId: w.annaId, appointmentId: w.visitId, text: "A question")
            _ = try await w.files.answer(w.desk, appointmentId: w.visitId, text: "An answer")
            _ = try system.clients.logIn(login: "anna", password: "correct-horse-42")
            try await system.outbox.noteTextGateway() // a gateway's process has said it sends texts
            _ = try await system.clients.setPhone(clientId: w.annaId, number: "+13035550123")
        }()
        let noted = try system.appointments.createAppointment(
            clientId: w.annaId, departmentId: w.visit.departmentId,
            at: .local(LocalDateTime(year: 2026, month: 11, day: 24, hour: 9, minute: 20)!), notes: "Rash on the left arm")
        let before = try fingerprint(system)
        let export = try await exported()
        #expect(try fingerprint(system) == before, "an export reads, and marks nothing read")
        #expect(export.client.name == "Anna" && export.client.surname == "Smith")
        #expect(export.appointments.map(\.0.id) == [w.visitId, noted.id] && export.appointments.last?.0.notes == "Rash on the left arm")
        #expect(export.appointments.allSatisfy { $0.1.first?.event == "booked" })
        #expect(export.attachments.map(\.sha256) == [photo.sha256] && export.attachments[0].name == "rash.jpg")
        let conversation = try #require(export.conversations.first)
        #expect(conversation.messages.map(\.text) == ["A question", "An answer"] && conversation.unread == 1)
        #expect(conversation.messages.last?.staffName == "Sam Lee")
        #expect(!export.messages.isEmpty && export.sessions.count == 1)
        #expect(export.phone?.number == "+13035550123" && export.phone?.confirmed == false, "the number opened")
        let json = String(decoding: try Shapes.encoder(pretty: false).encode(ExportJSON(export)), as: UTF8.self)
        #expect(json.contains(photo.sha256) && json.contains("A question") && json.contains("Rash on the left arm"))

        try { try system.clients.deleteAccount(clientId: w.annaId, password: "correct-horse-42") }()
        for table in ["attachments", "attachment_chunks", "threads", "thread_messages"] {
            #expect(try storedInt(system, "SELECT count(*) FROM \(table)") == 0, "\(table) emptied with the account")
        }
        #expect(await expectError(.notLoggedIn) { _ = try await exported() } != nil)
    }

    /// Uploads by both paths (issue 56: the CLI's seam, and a server's awaited `attach`: the
    /// appointment looked at first, the file prepared on a runner, `FrontDeskChangesStore.addFile`):
    /// a file for another's appointment is refused before it is decoded, the sixth is refused, the
    /// clinic's is audited, a file round-trips sealed, and once the visit has begun the patient's
    /// are refused; a refusal changes nothing.
    @Test(arguments: [false, true]) func filesAreAddedByThePatientAndTheClinic(awaited: Bool) async throws {
        let w = try world()
        let files = w.files
        func mine(_ data: Data, clientId: Int64? = nil, name: String? = nil) async throws -> AttachmentInfo {
            let clientId = clientId ?? w.annaId, upload = AttachmentUpload(data: data, name: name)
            if awaited { return try await files.attach(clientId: clientId, appointmentId: w.visitId, upload, images: InlinePasswordRunner()) }
            return try { try files.attach(clientId: clientId, appointmentId: w.visitId, upload) }()
        }
        func clinics(_ member: StaffMember, _ data: Data, name: String? = nil) async throws -> AttachmentInfo {
            let upload = AttachmentUpload(data: data, name: name)
            if awaited {
                return try await files.attach(member, appointmentId: w.visitId, upload, requestId: "r-add", images: InlinePasswordRunner())
            }
            return try { try files.attach(member, appointmentId: w.visitId, upload, requestId: "r-add") }()
        }
        let broken = try fixture("truncated.jpg"), pdf = try fixture("tiny.pdf")
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { _ = try await mine(broken, clientId: w.bob.id ?? 0) } != nil, "before it is decoded")
        #expect(await expectError(.notFound) { _ = try await clinics(w.otherClinic, broken) } != nil, "before it is decoded")
        #expect(await expectError(.notFound) { _ = try await clinics(w.otherDoctor, pdf) } != nil)
        #expect(await expectError(.invalidInput) { _ = try await mine(broken) } != nil)
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")

        let big = try pdfOfSize(AttachmentLimits.chunkSize * 2 + 1234)
        let scan = try await mine(big, name: "scan.pdf")
        #expect(scan.author == .patient && scan.name == "scan.pdf" && scan.size == big.count)
        #expect(try storedInt(w.system, "SELECT count(*) FROM attachment_chunks WHERE attachment_id = \(scan.id)") == 3)
        let content = try { try files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: scan.id) }()
        #expect(try files.bytes(content) == big && content.chunkCount == 3)
        let photo = try await mine(try fixture("portrait-exif.jpg"), name: "rash.jpg")
        #expect(photo.hasThumbnail && photo.width == 300)
        for index in 3...AttachmentLimits.maximumFiles { _ = try await mine(pdf, name: "page \(index).pdf") }
        let full = try fingerprint(w.system)
        #expect(await expectError(.limitReached) { _ = try await mine(pdf) }?.key == .attachmentLimit)
        #expect(try fingerprint(w.system) == full)

        let plan = try await clinics(w.doctor, pdf, name: "care plan.pdf")
        #expect(plan.author == .staff && plan.name == "care plan.pdf", "the clinic's files are counted on their own")
        let added = try { try w.system.clients.accessLog(clientId: w.annaId) }().filter { $0.action == "attachment.add" }
        #expect(added.count == 1 && added.first?.requestId == "r-add" && added.first?.detail.contains("application/pdf") == true)

        w.clock.advance(w.visit.startsAt.timeIntervalSince(w.clock.now) + 60)
        let started = try fingerprint(w.system)
        #expect(await expectError(.tooLate) { _ = try await mine(pdf) } != nil)
        #expect(try fingerprint(w.system) == started)
        #expect(try await clinics(w.desk, pdf).author == .staff, "the clinic adds at any time")
        #expect(try auditIsSound(w.system))
    }

    /// The patient's removal by both paths (issue 56: the CLI's seam and a server's awaited
    /// `FrontDeskChangesStore.removeFile`): only their own file of their own appointment, before
    /// the visit; a refusal changes nothing.
    @Test(arguments: [false, true]) func aPatientRemovesOnlyTheirOwnFileBeforeTheVisit(awaited: Bool) async throws {
        let w = try world()
        let files = w.files
        func remove(_ clientId: Int64, _ id: Int64) async throws {
            if awaited { return try await files.remove(clientId: clientId, appointmentId: w.visitId, attachmentId: id) }
            try { try files.remove(clientId: clientId, appointmentId: w.visitId, attachmentId: id) }()
        }
        let photo = try upload(w, try fixture("portrait-exif.jpg"), name: "rash.jpg")
        let pdf = try upload(w, try fixture("tiny.pdf"), name: "referral.pdf")
        let plan = try files.add(w.doctor, appointmentId: w.visitId, try files.prepare(AttachmentUpload(data: try fixture("tiny.pdf"), name: "plan.pdf")))
        let before = try fingerprint(w.system)
        #expect(await expectError(.forbidden) { try await remove(w.bob.id ?? 0, pdf.id) } != nil)
        #expect(await expectError(.notFound) { try await remove(w.annaId, 99_999) } != nil)
        #expect(await expectError(.forbidden) { try await remove(w.annaId, plan.id) }?.key == .attachmentNotYours)
        #expect(try fingerprint(w.system) == before, "a refusal changes nothing")
        try await remove(w.annaId, pdf.id)
        #expect(try { try files.list(clientId: w.annaId, appointmentId: w.visitId) }().map(\.id) == [photo.id, plan.id])
        #expect(try storedInt(w.system, "SELECT count(*) FROM attachment_chunks WHERE attachment_id = \(pdf.id)") == 0)
        #expect(await expectError(.notFound) { try await remove(w.annaId, pdf.id) } != nil, "once")
        w.clock.advance(w.visit.startsAt.timeIntervalSince(w.clock.now) + 60)
        let started = try fingerprint(w.system)
        #expect(await expectError(.tooLate) { try await remove(w.annaId, photo.id) } != nil)
        #expect(try fingerprint(w.system) == started)
    }

    /// SQLite's own file: a removed file leaves no copy of its sealed bytes in the database
    /// file after a checkpoint and VACUUM (nor, with secure_delete, in the free pages before).
    @Test(.sqliteOnly, arguments: [false, true]) func aRemovedFileLeavesNoCopyInTheDatabaseFile(awaited: Bool) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("attach-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("c.sqlite").path
        let database = try SQLiteStore.open(path: path, migrations: projectMigrations)
        let w = try world(store: database)
        let file = try pdfOfSize(40_000)
        let info = try upload(w, file, name: "letter.pdf")
        let sealed = try #require(try database.read { db in
            try Data.fetchOne(db, sql: "SELECT data FROM attachment_chunks WHERE attachment_id = ? AND idx = 0", arguments: [info.id])
        })
        let probe = sealed.subdata(in: 100..<164)
        func fileHolds(_ bytes: Data) throws -> Bool {
            for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
                if try Data(contentsOf: URL(fileURLWithPath: file)).range(of: bytes) != nil { return true }
            }
            return false
        }
        try { try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") } }()
        #expect(try fileHolds(probe), "the probe is what is stored, so its absence later means something")
        let plain = file.subdata(in: 1000..<1064)
        #expect(try !fileHolds(plain), "sealed: the plain bytes were never in the file")

        if awaited {
            try await w.files.remove(clientId: w.annaId, appointmentId: w.visitId, attachmentId: info.id)
        } else {
            try { try w.files.remove(clientId: w.annaId, appointmentId: w.visitId, attachmentId: info.id) }()
        }
        let gone = try !fileHolds(probe)
        #expect(gone, "secure_delete overwrote it, and the removal truncated the log, before any VACUUM")
        try {
            try database.writer.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }()
        let goneAfterVacuum = try !fileHolds(probe)
        #expect(goneAfterVacuum)
    }

    /// SQLite's key rotation seals the conversations again and re-wraps the files' own keys
    /// (the chunks stay as they are: AttachmentKeyTests): they still open after.
    @Test(.sqliteOnly) func keyRotationSealsFilesAndMessagesAgain() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("attach-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try SQLiteStore.open(path: folder.appendingPathComponent("c.sqlite").path, migrations: projectMigrations)
        let w = try world(store: database)
        let big = try pdfOfSize(AttachmentLimits.chunkSize + 10)
        let info = try upload(w, big, name: "scan.pdf")
        _ = try w.files.write(clientId: w.annaId, appointmentId: w.visitId, text: "Sealed words")
        let sealedBefore = try database.read { db in try Data.fetchAll(db, sql: "SELECT data FROM attachment_chunks ORDER BY id") }
        try database.rotateKey()
        let sealedAfter = try database.read { db in try Data.fetchAll(db, sql: "SELECT data FROM attachment_chunks ORDER BY id") }
        #expect(sealedBefore == sealedAfter)
        let content = try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: info.id)
        let back = try w.files.bytes(content)
        #expect(content.info.name == "scan.pdf" && back == big)
        #expect(try w.files.conversation(clientId: w.annaId, appointmentId: w.visitId).messages.map(\.text) == ["Sealed words"])
    }

    /// A whole file read a chunk at a time by the awaited path, as a download streams it.
    func awaitedBytes(_ files: AttachmentController, _ content: AttachmentContent) async throws -> Data {
        var data = Data()
        for index in 0..<content.chunkCount { data.append(try await files.chunk(content, index: index)) }
        return data
    }

    // MARK: Files made here

    /// A PDF of `size` bytes with nothing active in it.
    /// A PDF of `size` bytes that qpdf opens (one catalog, found by repairing), most of it a
    /// comment of letters.
    func pdfOfSize(_ size: Int) throws -> Data {
        let tail = Data("\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF".utf8)
        var data = Data("%PDF-1.4\n% filler ".utf8)
        var state: UInt32 = 12345
        while data.count < size - tail.count {
            state = state &* 1_103_515_245 &+ 12345
            data.append(UInt8(0x61 + (state >> 16) % 26))
        }
        return data + tail
    }

    /// The fixture of 69 bytes that claims 20,000 × 20,000, made to claim 50,000 × 50,000.
    func bomb() throws -> Data {
        var bytes = [UInt8](try fixture("huge-header.png"))
        for (offset, value) in [(16, UInt32(50_000)), (20, UInt32(50_000))] {
            for shift in 0..<4 { bytes[offset + shift] = UInt8((value >> (24 - 8 * shift)) & 0xFF) }
        }
        let crc = crc32(Array(bytes[12..<29]))
        for shift in 0..<4 { bytes[29 + shift] = UInt8((crc >> (24 - 8 * shift)) & 0xFF) }
        return Data(bytes)
    }

    func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
