import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Files on appointments and the conversation with the clinic (issue 28): the patient's routes
/// under `/v1/appointments/{id}` and the staff's under `/v1/staff`. Each decodes, calls one
/// `AttachmentController` use case, and encodes; the rules are ClinicKit's.
///
/// An upload is the raw body with its `Content-Type` (a name in `Content-Disposition` or
/// `?name=`), or `multipart/form-data` with one file. Bodies up to `uploadLimit` are taken on
/// these routes only (`LimitsMiddleware`), read after the session is checked; files are
/// checked and photos decoded two at a time (`ServerDependencies.images`). A download is streamed a chunk at a time (each read awaited), served
/// with `Content-Disposition` (PDFs always as `attachment`), `nosniff` and a `sandbox` CSP.
struct AttachmentsController {
    struct MessageBody: Decodable, Sendable { let text: String; let attachmentId: Int64? }
    struct UnreadJSON: Encodable { let unread: Int }

    /// The largest upload body: the file's limit and room for a multipart envelope.
    static let uploadLimit = AttachmentLimits.maximumBytes + 64 * 1024

    /// Whether a request is an upload (a POST to an attachments collection of the API or of
    /// the patient's web pages), which
    /// `LimitsMiddleware` lets through up to `uploadLimit`.
    static func isUpload(_ request: Request) -> Bool {
        guard request.method == .post else { return false }
        let segments = request.uri.path.split(separator: "/")
        return (segments.count == 4 && segments[0] == "v1" && segments[1] == "appointments" && segments[3] == "attachments")
            || (segments.count == 3 && segments[0] == "appointments" && segments[2] == "attachments")
            || (segments.count == 5 && segments[0] == "v1" && segments[1] == "staff" && segments[2] == "appointments"
                && segments[4] == "attachments")
    }

    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(patient group: RouterGroup<APIContext>, staff: RouterGroup<APIContext>) {
        let patient = group.group("appointments").add(middleware: PatientAuthenticator(dependencies: dependencies))
        patient.post(":id/attachments", use: patientUpload)
        patient.get(":id/attachments", use: patientList)
        patient.get(":id/attachments/:aid", use: patientDownload)
        patient.get(":id/attachments/:aid/thumbnail", use: patientThumbnail)
        patient.delete(":id/attachments/:aid", use: patientRemove)
        patient.get(":id/messages", use: patientThread)
        patient.post(":id/messages", use: patientWrite)
        group.group("me").add(middleware: PatientAuthenticator(dependencies: dependencies)).get("thread-unread", use: patientUnread)

        let desk = staff.group().add(middleware: StaffAuthenticator(dependencies: dependencies))
        desk.get("appointments/:id/attachments", use: staffList)
        desk.post("appointments/:id/attachments", use: staffUpload)
        desk.get("appointments/:id/attachments/:aid", use: staffDownload)
        desk.get("appointments/:id/attachments/:aid/thumbnail", use: staffThumbnail)
        desk.get("appointments/:id/messages", use: staffThread)
        desk.post("appointments/:id/messages", use: staffAnswer)
        desk.post("appointments/:id/thread/close", use: staffClose)
        desk.get("threads", use: threads)
    }

    // MARK: The patient

    @Sendable func patientUpload(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        let info = try await dependencies.admittingUpload(request, account: "patient:\(patient.id)", patient.language) {
            let upload = try await Self.upload(request, context: context)
            return try await dependencies.images.run { [system] in
                try await dependencies.awaited(patient.language) {
                    try await system.attachments.attach(clientId: patient.id, appointmentId: id, upload, images: dependencies.poolRunner)
                }
            }
        }
        return try HTTPMapping.json(AttachmentJSON(info), status: .created)
    }

    @Sendable func patientList(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        let list = try await dependencies.awaited(patient.language) { [system] in
            try await system.attachments.list(clientId: patient.id, appointmentId: id)
        }
        return try HTTPMapping.json(ItemsJSON(list.map(AttachmentJSON.init)))
    }

    @Sendable func patientDownload(_ request: Request, context: APIContext) async throws -> Response {
        try await patientContent(request, context, .file)
    }

    @Sendable func patientThumbnail(_ request: Request, context: APIContext) async throws -> Response {
        try await patientContent(request, context, .thumbnail)
    }

    func patientContent(_ request: Request, _ context: APIContext, _ part: AttachmentPart) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id"), aid = try context.parameters.id("aid")
        let content = try await dependencies.awaited(patient.language) { [system] in
            try await system.attachments.open(clientId: patient.id, appointmentId: id, attachmentId: aid, part: part)
        }
        return download(content)
    }

    @Sendable func patientRemove(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id"), aid = try context.parameters.id("aid")
        try await dependencies.awaited(patient.language) { [system] in
            try await system.attachments.remove(clientId: patient.id, appointmentId: id, attachmentId: aid)
        }
        return Response(status: .noContent)
    }

    @Sendable func patientThread(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        let limit = try request.queryInt("limit") ?? ThreadLimits.pageDefault, cursor = request.query("cursor")
        let conversation = try await dependencies.awaited(patient.language) { [system] in
            try await system.attachments.conversation(clientId: patient.id, appointmentId: id, limit: limit, cursor: cursor)
        }
        return try HTTPMapping.json(ConversationJSON(conversation))
    }

    @Sendable func patientWrite(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        let body = try await RequestBody.decode(MessageBody.self, from: request, context: context)
        let message = try await dependencies.awaited(patient.language) { [system] in
            try await system.attachments.write(clientId: patient.id, appointmentId: id, text: body.text, attachmentId: body.attachmentId)
        }
        return try HTTPMapping.json(ThreadMessageJSON(message), status: .created)
    }

    @Sendable func patientUnread(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let unread = try await dependencies.awaited(patient.language) { [system] in try await system.attachments.unreadAnswers(clientId: patient.id) }
        return try HTTPMapping.json(UnreadJSON(unread: unread))
    }

    // MARK: The staff

    @Sendable func staffList(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let list = try await dependencies.awaited(context.language) { [system] in
            try await system.attachments.list(member, appointmentId: id, requestId: requestId)
        }
        return try HTTPMapping.json(ItemsJSON(list.map(AttachmentJSON.init)))
    }

    @Sendable func staffUpload(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let info = try await dependencies.admittingUpload(request, account: "staff:\(member.id)", context.language) {
            let upload = try await Self.upload(request, context: context)
            return try await dependencies.images.run { [system] in
                try await dependencies.awaited(context.language) {
                    try await system.attachments.attach(member, appointmentId: id, upload, requestId: requestId,
                                                        images: dependencies.poolRunner)
                }
            }
        }
        return try HTTPMapping.json(AttachmentJSON(info), status: .created)
    }

    @Sendable func staffDownload(_ request: Request, context: APIContext) async throws -> Response {
        try await staffContent(request, context, .file)
    }

    @Sendable func staffThumbnail(_ request: Request, context: APIContext) async throws -> Response {
        try await staffContent(request, context, .thumbnail)
    }

    func staffContent(_ request: Request, _ context: APIContext, _ part: AttachmentPart) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id"), aid = try context.parameters.id("aid")
        let requestId = context.requestId
        let content = try await dependencies.awaited(context.language) { [system] in
            try await system.attachments.open(member, appointmentId: id, attachmentId: aid, part: part, requestId: requestId)
        }
        return download(content)
    }

    @Sendable func staffThread(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let limit = try request.queryInt("limit") ?? ThreadLimits.pageDefault, cursor = request.query("cursor")
        let conversation = try await dependencies.awaited(context.language) { [system] in
            try await system.attachments.conversation(member, appointmentId: id, requestId: requestId, limit: limit, cursor: cursor)
        }
        return try HTTPMapping.json(ConversationJSON(conversation))
    }

    @Sendable func staffAnswer(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let body = try await RequestBody.decode(MessageBody.self, from: request, context: context)
        let message = try await dependencies.awaited(context.language) { [system] in
            try await system.attachments.answer(member, appointmentId: id, text: body.text, attachmentId: body.attachmentId,
                                                requestId: requestId)
        }
        return try HTTPMapping.json(ThreadMessageJSON(message), status: .created)
    }

    @Sendable func staffClose(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        try await dependencies.awaited(context.language) { [system] in
            try await system.attachments.close(member, appointmentId: id, requestId: requestId)
        }
        return Response(status: .noContent)
    }

    @Sendable func threads(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let text = request.uri.queryParameters.get("state") ?? "open"
        guard let state = StoredThread.State(rawValue: text) else {
            throw APIFailure(ServerError.invalid(.fieldChoice, "state", "open, closed"), language: context.language)
        }
        let list = try await dependencies.awaited(context.language) { [system] in try await system.attachments.threads(member, state: state) }
        return try HTTPMapping.json(ThreadListJSON(list))
    }

    // MARK: Bodies

    /// The uploaded file: a multipart form's file part, or the raw body.
    static func upload(_ request: Request, context: APIContext) async throws -> AttachmentUpload {
        try await form(request, language: context.language).upload
    }

    /// The uploaded file and, for a multipart form, its short text fields (the web form's
    /// `csrf`). A declared length over `uploadLimit` is refused before anything is read.
    static func form(_ request: Request, language: Language) async throws -> (upload: AttachmentUpload, fields: [String: String]) {
        let tooLarge = APIFailure(ServerError(.tooLarge, .tooLarge, String(uploadLimit)), language: language,
                                  headers: [.connection: "close"])
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > uploadLimit { throw tooLarge }
        // Read straight into one buffer of the declared size: each part is copied once and let
        // go, where collecting a ByteBuffer (grown by doubling) and then copying it into Data
        // held three times the body at the peak (issue 42's memory under many uploads).
        var body = Data(capacity: min(declared ?? 256 * 1024, uploadLimit))
        for try await part in request.body {
            // A chunked body past the limit: the upload's limit is what applied, not the one
            // of other routes that the error middleware would name.
            guard body.count + part.readableBytes <= uploadLimit else { throw tooLarge }
            part.withUnsafeReadableBytes { body.append(contentsOf: $0) }
        }
        let type = request.headers[.contentType]
        if let type, let boundary = Multipart.boundary(type) {
            guard let form = Multipart.form(in: body, boundary: boundary), let file = form.file else {
                throw APIFailure(ServerError.invalid(.bodyInvalid, "multipart/form-data without a file part"), language: language)
            }
            return (AttachmentUpload(data: file.data, declaredType: file.contentType, name: file.filename), form.fields)
        }
        let name = request.headers[.contentDisposition].flatMap { Multipart.parameter("filename", of: $0) }
            ?? request.uri.queryParameters.get("name")
        return (AttachmentUpload(data: body, declaredType: type, name: name), [:])
    }

    func download(_ content: AttachmentContent) -> Response { dependencies.attachmentResponse(content) }
}

extension ServerDependencies {
    /// An attachment's bytes (`AttachmentsController`, the web pages), streamed a chunk at a time; never rendered by a browser as a page.
    func attachmentResponse(_ content: AttachmentContent) -> Response {
        let ascii = String(content.info.name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        let encoded = content.info.name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: ".-_"))) ?? ascii
        let inline = content.part == .thumbnail || content.info.contentType.hasPrefix("image/")
        var headers: HTTPFields = [:]
        headers[.contentType] = content.part == .thumbnail ? "image/jpeg" : content.info.contentType
        headers[.contentDisposition] = "\(inline ? "inline" : "attachment"); filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
        headers[.contentSecurityPolicy] = "sandbox; default-src 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        let system = self.system
        let body = ResponseBody(contentLength: content.size) { writer in
            for index in 0..<content.chunkCount {
                let chunk = try await system.attachments.chunk(content, index: index)
                try await writer.write(ByteBuffer(bytes: chunk))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}
