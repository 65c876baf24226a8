/* The search's ranking, given to Sphinx by conf.py (html_search_scorer):
   Sphinx's default scores (searchtools.js), with the pages for the site's
   builders and translators after every page for its readers. They still
   come up, last, for the words only they use. */
var Scorer = {
  score: function (result) {
    var docname = result[0], score = result[4];
    return ["building", "translating"].indexOf(docname) >= 0 ? score - 1000 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
