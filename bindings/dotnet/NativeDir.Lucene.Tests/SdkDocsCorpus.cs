#nullable enable
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Xml.Linq;

namespace NativeDir.Lucene.Tests
{
    /// <summary>
    /// A real text corpus every machine with the .NET SDK has offline: the API documentation of
    /// the reference pack (packs/Microsoft.NETCore.App.Ref/&lt;newest&gt;/ref/net*/*.xml), one
    /// document per documented member (id = the member's doc ID, body = its text). Shared by the
    /// tests and the benchmarks (linked into NativeDir.Lucene.Benchmarks).
    /// </summary>
    public static class SdkDocsCorpus
    {
        /// <summary>The SDK's reference-pack XML docs, sorted so every run indexes the same order.</summary>
        public static List<(string Id, string Body)> Load(int max)
        {
            string runtimeDir = Path.GetDirectoryName(typeof(object).Assembly.Location)!; // <root>/shared/Microsoft.NETCore.App/<ver>
            string root = Environment.GetEnvironmentVariable("DOTNET_ROOT") is { Length: > 0 } env && System.IO.Directory.Exists(Path.Combine(env, "packs"))
                ? env : Path.GetFullPath(Path.Combine(runtimeDir, "..", "..", ".."));
            string refPacks = Path.Combine(root, "packs", "Microsoft.NETCore.App.Ref");
            if (!System.IO.Directory.Exists(refPacks))
                throw new InvalidOperationException($"no corpus: {refPacks} is missing (the .NET SDK's reference pack holds the XML docs this test indexes)");
            string[] files = System.IO.Directory.GetDirectories(refPacks).OrderBy(p => p, StringComparer.Ordinal).Last() is string ver
                ? System.IO.Directory.GetFiles(Path.Combine(ver, "ref"), "*.xml", SearchOption.AllDirectories).OrderBy(p => p, StringComparer.Ordinal).ToArray()
                : Array.Empty<string>();
            var docs = new List<(string, string)>();
            foreach (string f in files)
            {
                foreach (XElement m in XDocument.Load(f).Descendants("member"))
                {
                    string id = (string?)m.Attribute("name") ?? "";
                    string body = string.Join(" ", m.DescendantNodes().OfType<XText>().Select(x => x.Value.Trim()));
                    if (id.Length == 0 || body.Length == 0)
                        continue;
                    docs.Add((id, body));
                    if (docs.Count == max)
                        return docs;
                }
            }
            if (docs.Count < 1000)
                throw new InvalidOperationException($"corpus too small: {docs.Count} documents in {files.Length} files under {refPacks}");
            return docs;
        }

    }
}
