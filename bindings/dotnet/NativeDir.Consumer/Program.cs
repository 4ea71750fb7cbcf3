// A round-trip through NativeDir (run from the package by the consumer test and as a NativeAOT
// executable by the AOT smoke test): write, checksum, sync, list, read back every byte
// through a mapping and a buffer, lock, rename, delete. Exit code 0 only if everything matched.
using NativeDir;

string root = args.Length > 0 ? args[0] : Path.Combine(Path.GetTempPath(), "nd-consumer-" + Environment.ProcessId);
byte[] data = new byte[300_000];
new Random(5).NextBytes(data);

using (var dir = NativeDirectory.Open(root, create: true))
{
    using (NativeOutput output = dir.CreateOutput("segment.bin", IoOptions.Overwrite))
    {
        output.Write(data.AsSpan(0, 1000));
        for (int i = 1000; i < 2000; i++)
            output.WriteByte(data[i]);
        output.Write(data.AsSpan(2000));
        output.Sync();
        Console.WriteLine($"wrote {output.Position} bytes, crc32 {output.Checksum:x8}");
    }
    dir.SyncDirectory();
    Check(dir.FileLength("segment.bin") == data.Length, "length");
    Check(dir.ListAll().Contains("segment.bin"), "listing");

    foreach (IoOptions options in new[] { IoOptions.Mapped, IoOptions.Sequential })
    {
        using NativeInput input = dir.OpenInput("segment.bin", options);
        for (int i = 0; i < data.Length; i++)
            if (input.ReadByte() != data[i])
                Fail($"{options}: byte {i} differs");
        var buf = new byte[64];
        input.ReadBytes(123_456, buf);
        Check(buf.AsSpan().SequenceEqual(data.AsSpan(123_456, 64)), $"{options}: positional read");
        Console.WriteLine($"read back {data.Length} bytes with {input.Strategy}");
    }

    using (NativeLock held = dir.Lock("write.lock"))
    {
        try
        {
            using NativeLock second = dir.Lock("write.lock");
            Fail("a held lock was taken twice");
        }
        catch (NativeDirLockedException)
        {
        }
    }
    dir.Rename("segment.bin", "segment.old");
    dir.DeleteFile("segment.old");
    try
    {
        dir.FileLength("segment.old");
        Fail("a deleted file still has a length");
    }
    catch (FileNotFoundException)
    {
    }
    dir.DeleteFile("write.lock");
}
Directory.Delete(root);
Console.WriteLine($"nativedir {NativeDirectory.LibraryVersion} round-trip ok");
return 0;

static void Check(bool ok, string what)
{
    if (!ok)
        Fail(what);
}

static void Fail(string what)
{
    Console.Error.WriteLine("round-trip FAILED: " + what);
    Environment.Exit(1);
}
