// NativeDir from C#: open a directory, write a file and make it durable, read it back.
using System.Text;
using NativeDir;

string path = args.Length > 0 ? args[0] : "example-index";
byte[] text = Encoding.UTF8.GetBytes("nativedir: durable on return");

using var dir = NativeDirectory.Open(path, create: true);

// write under a temporary name, make the bytes durable, then rename: the final name always holds
// a whole file
using (NativeOutput output = dir.CreateOutput("notes.tmp", IoOptions.Overwrite))
{
    output.Write(text);
    output.Sync();                        // flush and fsync through this handle
    Console.WriteLine($"crc32 {output.Checksum:x8}");
}
dir.Rename("notes.tmp", "notes");
dir.SyncDirectory();                      // the rename is durable too

// read it back through a mapping: a byte read is a memory load, positional reads are thread-safe
using NativeInput input = dir.OpenInput("notes", IoOptions.Mapped | IoOptions.Random);
var back = new byte[text.Length];
input.ReadBytes(0, back);
if (!back.AsSpan().SequenceEqual(text))
    throw new InvalidDataException("read back something else");
Console.WriteLine($"wrote and read back {text.Length} bytes with nativedir {NativeDirectory.LibraryVersion}");
