// Chinese queries split as the index was split (ext/translation/search.py).
// The index holds what jieba made of the pages (自定义, 算子); the browser
// splits a query only at spaces and punctuation (自定义算子). A run of Chinese
// characters that is not itself a word of the index is cut into words of the
// index by bidirectional maximum matching: the longest words from the left,
// and from the right, whichever keeps more of the run (then: fewer words).
// A single character the index lacks is dropped, as the index drops it.
// Called when a search runs, so the index is loaded by then.
var splitQuery = (query) => {
  const words = query
    .split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)
    .filter((word) => word);
  const index = typeof Search === "undefined" ? null : Search._index;
  if (!index) return words;
  const known = (word) => word in index.terms || word in index.titleterms;
  const han = /\p{Script=Han}/u;
  const match = (run, fromLeft) => {
    const parts = [];
    for (let rest = run; rest; ) {
      let n = Math.min(8, rest.length);
      const take = (k) => (fromLeft ? rest.slice(0, k) : rest.slice(rest.length - k));
      while (n > 1 && !known(take(n))) n--;
      if (n > 1 || known(take(1))) parts.push(take(n));
      rest = fromLeft ? rest.slice(n) : rest.slice(0, rest.length - n);
    }
    return fromLeft ? parts : parts.reverse();
  };
  const kept = (parts) => parts.join("").length;
  return words.flatMap((word) => {
    if (!han.test(word) || known(word)) return [word];
    return word.match(/\p{Script=Han}+|[^\p{Script=Han}]+/gu).flatMap((run) => {
      if (!han.test(run)) return [run];
      const [left, right] = [match(run, true), match(run, false)];
      const better = kept(left) - kept(right) || right.length - left.length;
      return better > 0 ? left : right;
    });
  });
};
