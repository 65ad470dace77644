import ArgumentParser
import ClinicKit
import Foundation

// Files on appointments and the conversations with the clinic (issue 28): the patient's
// `clinic appointments attach|attachments|attachment get|attachment remove` and
// `clinic messages write|thread`, the staff's `clinic staff attachments …` and
// `clinic staff threads|thread|answer|close-thread`. Each calls one AttachmentController use case.

/// Reads a file to attach: its size is checked before it is read (a file over the limit is
/// refused without being loaded), and its name goes with it.
func attachmentUpload(_ path: String) throws -> AttachmentUpload {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
          attributes[.type] as? FileAttributeType == .typeRegular,
          let size = (attributes[.size] as? NSNumber)?.intValue else {
        throw ClinicError.invalid(.fileUnreadable, path)
    }
    guard size <= AttachmentLimits.maximumBytes else {
        throw ClinicError(.fileTooLarge, .attachmentTooLarge, String(AttachmentLimits.maximumBytes / (1024 * 1024)))
    }
    guard let data = FileManager.default.contents(atPath: path) else { throw ClinicError.invalid(.fileUnreadable, path) }
    return AttachmentUpload(data: data, declaredType: nil, name: (path as NSString).lastPathComponent)
}

/// Writes an opened file to `path` a chunk at a time: a new file (mode 0600), never over one
/// that exists; a failure half way removes what was written.
func saveAttachment(_ content: AttachmentContent, _ system: ClinicSystem, to path: String) async throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
        throw ClinicError.invalid(errno == EEXIST ? .attachmentOutputExists : .attachmentOutputUnwritable, path)
    }
    var done = false
    defer {
        close(descriptor)
        if !done { unlink(path) }
    }
    for index in 0..<content.chunkCount {
        let chunk = try await system.attachments.chunk(content, index: index)
        let written = chunk.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard written == chunk.count else { throw ClinicError.invalid(.attachmentOutputUnwritable, path) }
    }
    done = true
}

func attachmentLines(_ list: [AttachmentInfo], _ context: Context) -> String {
    guard !list.isEmpty else { return context.text(.attachmentsNone) }
    return list.map {
        context.text(.attachmentLine, String($0.id), $0.name, $0.contentType, String($0.size),
                     $0.author == .staff ? context.text(.attachmentFromClinic) : "")
    }.joined(separator: "\n")
}

func conversationLines(_ conversation: Conversation, _ context: Context) -> String {
    guard !conversation.messages.isEmpty else { return context.text(.threadNone) }
    return conversation.messages.map {
        context.text(.threadLine, DateText.dateTime($0.createdAt, timeZone: .current, language: context.language),
                     $0.author == .patient ? context.text(.actorPatient) : ($0.staffName ?? context.text(.actorStaff)), $0.text)
    }.joined(separator: "\n")
}

extension AppointmentsCommand {
    struct Attach: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Attach a photo (JPEG, PNG, HEIC) or a PDF to one of your appointments, before it starts (at most 5, 10 MiB each).",
            discussion: "Photos are kept upright, without EXIF or GPS data, at most 3,000 px; PDFs as sent.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Appointment id.") var appointmentId: Int64
        @Argument(help: "The file.") var file: String

        func run() async throws {
            let context = Context(global)
            let upload = try attachmentUpload(file)
            let (system, client) = try await context.awaitedSignedIn()
            let info = try await system.attachments.attach(clientId: client.id ?? 0, appointmentId: appointmentId, upload,
                                                                  images: InlinePasswordRunner())
            try context.emit(AttachmentJSON(info)) { context.text(.attachmentAdded, String(info.id), info.name, String(info.size)) }
        }
    }

    struct Attachments: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the files of one of your appointments.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Appointment id.") var appointmentId: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let list = try await system.attachments.list(clientId: client.id ?? 0, appointmentId: appointmentId)
            try context.emit(ItemsJSON(list.map(AttachmentJSON.init))) { attachmentLines(list, context) }
        }
    }

    struct Attachment: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save one file of your appointment, or remove one of yours before the visit.", subcommands: [Get.self, Remove.self])

        struct Get: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Save a file of one of your appointments to a new file.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "Appointment id.") var appointmentId: Int64
            @Argument(help: "File id.") var attachmentId: Int64
            @Option(help: ArgumentHelp("Where to save it (a new file).", valueName: "file")) var out: String

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                let content = try await system.attachments.open(clientId: client.id ?? 0, appointmentId: appointmentId, attachmentId: attachmentId)
                try await saveAttachment(content, system, to: out)
                try context.emit(AttachmentJSON(content.info)) { context.text(.attachmentSaved, String(content.size), out) }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove one of your files, before the visit.")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "Appointment id.") var appointmentId: Int64
            @Argument(help: "File id.") var attachmentId: Int64

            func run() async throws {
                let context = Context(global)
                let (system, client) = try await context.awaitedSignedIn()
                try await system.attachments.remove(clientId: client.id ?? 0, appointmentId: appointmentId, attachmentId: attachmentId)
                struct Removed: Encodable { let removed: Int64 }
                try context.emit(Removed(removed: attachmentId)) { context.text(.attachmentRemoved, String(attachmentId)) }
            }
        }
    }
}

extension Messages {
    struct Write: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write to the clinic of one of your appointments (up to 2,000 characters).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Appointment id.") var appointment: Int64
        @Option(help: "One of the appointment's files the message is about.") var attachment: Int64?
        @Argument(help: "The message.") var text: String

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let message = try await system.attachments.write(clientId: client.id ?? 0, appointmentId: appointment, text: text,
                                                       attachmentId: attachment)
            try context.emit(ThreadMessageJSON(message)) { context.text(.threadWritten) }
        }
    }

    struct Thread: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your conversation with the clinic about one appointment (its answers are read now).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Appointment id.") var appointment: Int64

        func run() async throws {
            let context = Context(global)
            let (system, client) = try await context.awaitedSignedIn()
            let conversation = try await system.attachments.conversation(clientId: client.id ?? 0, appointmentId: appointment)
            try context.emit(ConversationJSON(conversation)) { conversationLines(conversation, context) }
        }
    }
}

extension StaffCommand {
    struct StaffAttachments: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "attachments",
            abstract: "An appointment's files: list, save (each opening is in the patient's access log), add a document for the patient.",
            subcommands: [List.self, Get.self, Add.self], defaultSubcommand: List.self)

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List an appointment's files.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Appointment id.") var appointment: Int64

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let list = try await system.attachments.list(member, appointmentId: appointment)
                    try context.emit(ItemsJSON(list.map(AttachmentJSON.init))) { attachmentLines(list, context) }
                }
            }
        }

        struct Get: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Save a file of an appointment to a new file.")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Appointment id.") var appointment: Int64
            @Argument(help: "File id.") var attachmentId: Int64
            @Option(help: ArgumentHelp("Where to save it (a new file).", valueName: "file")) var out: String

            func run() async throws {
                let context = Context(global)
                try await context.awaitedAsStaff { system, member in
                    let content = try await system.attachments.open(member, appointmentId: appointment, attachmentId: attachmentId)
                    try await saveAttachment(content, system, to: out)
                    try context.emit(AttachmentJSON(content.info)) { context.text(.attachmentSaved, String(content.size), out) }
                }
            }
        }

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Attach a document for the patient (a care plan).")
            @OptionGroup var global: GlobalOptions
            @Option(help: "Appointment id.") var appointment: Int64
            @Argument(help: "The file.") var file: String

            func run() async throws {
                let context = Context(global)
                let upload = try attachmentUpload(file)
                try await context.awaitedAsStaff { system, member in
                    let info = try await system.attachments.attach(member, appointmentId: appointment, upload, images: InlinePasswordRunner())
                    try context.emit(AttachmentJSON(info)) { context.text(.attachmentAdded, String(info.id), info.name, String(info.size)) }
                }
            }
        }
    }

    struct Threads: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your clinic's conversations with patients, the latest first (receptionists, clinic admins).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Closed ones instead of open ones.") var closed = false

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let list = try await system.attachments.threads(member, state: closed ? .closed : .open)
                try context.emit(ThreadListJSON(list)) {
                    guard !list.items.isEmpty else { return context.text(.threadsNone) }
                    return list.items.map {
                        context.text(.threadsLine, DateText.dateTime($0.lastAt, timeZone: .current, language: context.language),
                                     String($0.appointmentId), $0.doctorName, String($0.unread))
                    }.joined(separator: "\n")
                }
            }
        }
    }

    struct Thread: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Read an appointment's conversation (in the patient's access log).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Appointment id.") var appointment: Int64

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let conversation = try await system.attachments.conversation(member, appointmentId: appointment)
                try context.emit(ConversationJSON(conversation)) { conversationLines(conversation, context) }
            }
        }
    }

    struct Answer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Answer a patient's conversation: they are told in the inbox and by e-mail.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Appointment id.") var appointment: Int64
        @Argument(help: "The answer (up to 2,000 characters).") var text: String

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                let message = try await system.attachments.answer(member, appointmentId: appointment, text: text)
                try context.emit(ThreadMessageJSON(message)) { context.text(.threadAnswered) }
            }
        }
    }

    struct CloseThread: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "close-thread", abstract: "Close an appointment's conversation.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Appointment id.") var appointment: Int64

        func run() async throws {
            let context = Context(global)
            try await context.awaitedAsStaff { system, member in
                try await system.attachments.close(member, appointmentId: appointment)
                struct Closed: Encodable { let closed: Int64 }
                try context.emit(Closed(closed: appointment)) { context.text(.threadClosed) }
            }
        }
    }
}

extension Admin {
    struct AttachmentsAdmin: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "attachments", abstract: "The retention of appointments' files and conversations.",
            subcommands: [Purge.self])

        struct Purge: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Delete the files and conversations of appointments that ended more than --days days ago (run it daily).",
                discussion: "Each appointment purged is an audit event (attachment.purge) the patient sees in their access log.")

            @OptionGroup var global: GlobalOptions
            @Option(help: "Days after the visit's end that its files and messages are kept (1–36500).") var days: Int = 365

            func run() async throws {
                let context = Context(global)
                let purged = try await context.awaitedSystem().attachments.purge(afterDays: days)
                struct Purged: Encodable { let appointments: Int; let files: Int; let messages: Int; let days: Int }
                try context.emit(Purged(appointments: purged.appointments, files: purged.files, messages: purged.messages, days: days)) {
                    context.text(.attachmentsPurged, String(purged.appointments), String(purged.files), String(purged.messages),
                                 String(days))
                }
            }
        }
    }
}
